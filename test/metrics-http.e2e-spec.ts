import { randomInt, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Controller, Get, Module } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, Public } from '#platform';
import { TEST_PASSWORD, TestContext } from './support/app.js';
import { growth, scrape } from './support/metrics-scrape.js';
import { rawExchange } from './support/raw-http.js';
import { scimOrganization, scimUser } from './support/scim.js';

// What the HTTP hooks count (docs/operators.md, "Metrics"): every request by method, route template and status class,
// the requests in flight, every error answer by status and code, sign-ins and SCIM requests. Each test compares two
// scrapes: the counters move by exactly what it sent (and the first scrape, counted once it was answered).

const TOKEN = 'metrics-http-token-0123456789-abcdefghij';
const AUTH_LIMIT = 5;
const BODY_LIMIT = 2048;
const DURATION = 'governance_http_request_duration_seconds_count';
const SERIES = ['method', 'route', 'status_class'] as const;
const SCRAPE = 'method=GET,route=/metrics,status_class=2xx';

const randomIp = () => `10.${randomInt(0, 255)}.${randomInt(0, 255)}.${randomInt(1, 254)}`;

/** A route that answers when the test says so: a request in flight for as long as the test wants. */
let release: () => void = () => undefined;
@Controller('test-hold')
class HoldController {
  @Get()
  @Public()
  async hold(): Promise<{ held: true }> {
    await new Promise<void>((resolve) => (release = resolve));
    return { held: true };
  }
}
@Module({ controllers: [HoldController] })
class HoldModule {}

describe('HTTP metrics', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({
      imports: [HoldModule],
      config: {
        metrics: { enabled: true, host: '127.0.0.1', token: TOKEN },
        authRateLimit: { max: AUTH_LIMIT, windowMs: 60_000 },
        bodyLimitBytes: BODY_LIMIT,
      },
    });
  });
  afterAll(async () => ctx?.close());

  /** A request from its own client address, so that the auth limiter counts only what a test means it to. */
  const send = (
    method: string,
    url: string,
    options: { ip?: string; body?: unknown; headers?: Record<string, string | string[]> } = {},
  ) =>
    ctx.app.inject({
      method: method as 'GET',
      url,
      remoteAddress: options.ip ?? randomIp(),
      headers: {
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      payload: typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    });

  it('counts every request by method, route template and status class, exactly what was sent', async () => {
    const before = await scrape(ctx, TOKEN);
    expect((await send('GET', '/api/v1/health')).statusCode).toBe(200);
    // The root /health is the same route.
    expect((await send('GET', '/health')).statusCode).toBe(200);
    expect((await send('GET', `/api/v1/agents/${newId()}`)).statusCode).toBe(401);
    expect((await send('GET', `/api/v1/agents/${newId()}`)).statusCode).toBe(401);
    expect((await send('GET', `/api/v1/no-such-thing/${randomUUID()}`)).statusCode).toBe(404);
    expect((await send('DELETE', '/12345678901234')).statusCode).toBe(404);
    const after = await scrape(ctx, TOKEN);
    expect(growth(before.counts(DURATION, SERIES), after.counts(DURATION, SERIES))).toEqual({
      [SCRAPE]: 1,
      'method=GET,route=/api/v1/health,status_class=2xx': 2,
      'method=GET,route=/api/v1/agents/:id,status_class=4xx': 2,
      'method=GET,route=unmatched,status_class=4xx': 1,
      'method=DELETE,route=unmatched,status_class=4xx': 1,
    });
    // The histogram's sum grew too, by durations, not by counts.
    const sum = (e: typeof before) =>
      e.sum('governance_http_request_duration_seconds_sum', { route: '/api/v1/health' });
    expect(sum(after)).toBeGreaterThan(sum(before));
    expect(sum(after) - sum(before)).toBeLessThan(60);
  });

  it('counts the scrape itself as in flight while it is answered, and nothing else once requests are done', async () => {
    const exposition = await scrape(ctx, TOKEN);
    expect(exposition.sum('governance_http_requests_in_flight')).toBe(1);
  });

  it('counts a request in flight until it is answered', async () => {
    const held = send('GET', '/api/v1/test-hold');
    await waitFor(async () => (await scrape(ctx, TOKEN)).sum('governance_http_requests_in_flight') === 2);
    release();
    expect((await held).statusCode).toBe(200);
    expect((await scrape(ctx, TOKEN)).sum('governance_http_requests_in_flight')).toBe(1);
  });

  it('takes a request out of flight once when its client goes away, and not again when it completes', async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.getHttpServer().address() as AddressInfo;
    const before = await scrape(ctx, TOKEN);
    const socket = connect(port, '127.0.0.1', () =>
      socket.write('GET /api/v1/test-hold HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
    );
    socket.on('error', () => undefined);
    await waitFor(async () => (await scrape(ctx, TOKEN)).sum('governance_http_requests_in_flight') === 2);
    socket.destroy();
    await waitFor(async () => (await scrape(ctx, TOKEN)).sum('governance_http_requests_in_flight') === 1);
    // The handler then answers to nobody: the request is not taken out of flight a second time.
    release();
    await sleep(50);
    const after = await scrape(ctx, TOKEN);
    expect(after.sum('governance_http_requests_in_flight')).toBe(1);
    // An aborted request has no status: no duration is recorded for it.
    expect(
      after.sum(DURATION, { route: '/api/v1/test-hold' }) -
        before.sum(DURATION, { route: '/api/v1/test-hold' }),
    ).toBe(0);
  });

  it('counts error answers by status and code: the auth limiter, the body limit, validation and the parser', async () => {
    const refusals = ['status', 'code'] as const;
    const before = await scrape(ctx, TOKEN);
    const ip = randomIp();
    const login = { email: 'nobody@example.com', password: 'wrong-password' };
    for (let i = 0; i < AUTH_LIMIT; i++) {
      expect((await send('POST', '/api/v1/auth/login', { ip, body: login })).statusCode).toBe(401);
    }
    expect((await send('POST', '/api/v1/auth/login', { ip, body: login })).statusCode).toBe(429);
    const tooLarge = await send('POST', '/api/v1/agents', { body: { name: 'x'.repeat(BODY_LIMIT * 2) } });
    expect(tooLarge.statusCode).toBe(413);
    // Two Authorization headers: refused by the early hook, before any route handler.
    const ambiguous = await send('GET', '/api/v1/health', {
      headers: { authorization: ['Bearer a', 'Bearer b'] },
    });
    expect(ambiguous.statusCode).toBe(400);
    expect((await send('POST', '/api/v1/agents', { body: '{"name":' })).statusCode).toBe(400);
    // A head Node's parser refuses never reaches Fastify: the service answers it on the socket itself.
    await ctx.app.listen({ port: 0, host: '127.0.0.1' }).catch(() => undefined);
    const { port } = ctx.app.getHttpServer().address() as AddressInfo;
    const overflow = await rawExchange(port, [
      `GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`,
    ]);
    expect(overflow.status).toBe(431);
    const after = await scrape(ctx, TOKEN);
    expect(
      growth(
        before.counts('governance_http_refusals_total', refusals),
        after.counts('governance_http_refusals_total', refusals),
      ),
    ).toEqual({
      'status=401,code=INVALID_CREDENTIALS': AUTH_LIMIT,
      'status=429,code=RATE_LIMIT_EXCEEDED': 1,
      'status=413,code=PAYLOAD_TOO_LARGE': 1,
      'status=400,code=VALIDATION_ERROR': 2,
      'status=431,code=HEADERS_TOO_LARGE': 1,
    });
  });

  it('counts password sign-ins by result, and leaves the other methods at 0', async () => {
    const org = await ctx.newOrganization();
    const logins = ['method', 'result'] as const;
    const before = await scrape(ctx, TOKEN);
    const signIn = (email: string, password: string) =>
      send('POST', '/api/v1/auth/login', { body: { email, password } });
    expect((await signIn(org.owner.email, TEST_PASSWORD)).statusCode).toBe(200);
    expect((await signIn(org.owner.email, 'not-the-password')).statusCode).toBe(401);
    expect((await signIn(`unknown-${randomUUID()}@example.com`, TEST_PASSWORD)).statusCode).toBe(401);
    const after = await scrape(ctx, TOKEN);
    expect(
      growth(
        before.counts('governance_logins_total', logins),
        after.counts('governance_logins_total', logins),
      ),
    ).toEqual({
      'method=password,result=success': 1,
      'method=password,result=failure': 2,
    });
    // Every method's series exists from the start, so that a rate of failures is defined before the first one.
    for (const method of ['password', 'magic_link', 'social', 'oidc', 'saml', 'mfa']) {
      for (const result of ['success', 'failure']) {
        expect(
          after.select('governance_logins_total', { method, result }),
          `${method} ${result}`,
        ).toHaveLength(1);
      }
    }
    expect(after.select('governance_mfa_failures_total')).toHaveLength(1);
  });

  it('counts SCIM requests by operation and status class, and their errors by code', async () => {
    const { client } = await scimOrganization(ctx, 'Metrics SCIM');
    const series = ['operation', 'status_class'] as const;
    const before = await scrape(ctx, TOKEN);
    const created = await client.post('/Users', scimUser(`metrics-${randomUUID()}@example.com`));
    expect(created.statusCode, created.body).toBe(201);
    expect((await client.get(`/Users/${created.json().id}`)).statusCode).toBe(200);
    expect((await client.get(`/Users/${randomUUID()}`)).statusCode).toBe(404);
    expect((await client.get('/Users?count=1')).statusCode).toBe(200);
    expect((await client.get('/Groups')).statusCode).toBe(200);
    expect((await client.get('/ServiceProviderConfig')).statusCode).toBe(200);
    const after = await scrape(ctx, TOKEN);
    expect(
      growth(
        before.counts('governance_scim_requests_total', series),
        after.counts('governance_scim_requests_total', series),
      ),
    ).toEqual({
      'operation=create,status_class=2xx': 1,
      'operation=get,status_class=2xx': 1,
      'operation=get,status_class=4xx': 1,
      'operation=list,status_class=2xx': 1,
      'operation=groups,status_class=2xx': 1,
      'operation=discovery,status_class=2xx': 1,
    });
    // A SCIM error body carries no `code`: the refusal is counted under the code the service rendered.
    const refusals = ['status', 'code'] as const;
    expect(
      growth(
        before.counts('governance_http_refusals_total', refusals),
        after.counts('governance_http_refusals_total', refusals),
      ),
    ).toEqual({ 'status=404,code=NOT_FOUND': 1 });
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('the condition did not hold in time');
    await sleep(10);
  }
}
