import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../../tools/cluster/cluster.mjs';
import {
  type CallOptions,
  call,
  databaseOf,
  metricSum,
  type Reply,
  TEST_PASSWORD,
  uniqueEmail,
} from './support.js';

/** Every limiter's window: long enough that one test's requests all fall in the window its first request opened. */
const WINDOW_MS = 10 * 60_000;
const WINDOW_S = WINDOW_MS / 1000;
const MAX = { auth: 3, scim: 3, cpi: 3, pdf: 2, audit: 3 };

/**
 * Sent one after another: request i goes to replica i % 4 directly for 0–2 and through the proxy for 3, so that
 * both the requests let through and the refused ones reach every replica. 3×max+1 requests: a limiter counting in
 * each process would let 3×max of them through.
 */
const countFor = (max: number) => 3 * max + 1;

interface Shot {
  index: number;
  /** The replica that answered (`api-N`). */
  replica: string;
  viaProxy: boolean;
  reply: Reply;
}

async function spread(
  cluster: Cluster,
  count: number,
  send: (base: string, index: number) => Promise<Reply>,
): Promise<Shot[]> {
  const shots: Shot[] = [];
  for (let index = 0; index < count; index++) {
    const slot = index % 4;
    const replica = cluster.replicas[slot];
    const reply = await send(replica ? replica.base! : cluster.base, index);
    const name = replica ? replica.name : reply.servedBy;
    if (!name) throw new Error(`request ${index} through the proxy carried no X-Served-By`);
    shots.push({ index, replica: name, viaProxy: !replica, reply });
  }
  return shots;
}

const header = (shot: Shot, name: string) => shot.reply.headers.get(name);

/**
 * One window shared by every replica: exactly the first `max` requests passed (wherever they went), every later one
 * was refused with 429 and a Retry-After within the configured window, and each replica (and the proxy) refused
 * some. With `rateLimitHeaders`, every reply carries RateLimit-Limit, the window's remaining count after this
 * request (max−1, max−2, … 0 whichever replica answered: the count is global) and RateLimit-Reset.
 */
function expectOneSharedWindow(shots: Shot[], max: number, rateLimitHeaders: boolean): Shot[] {
  const statuses = shots.map((s) => s.reply.status);
  const passed = shots.filter((s) => s.reply.status !== 429);
  const refused = shots.filter((s) => s.reply.status === 429);
  expect(
    passed.map((s) => s.index),
    String(statuses),
  ).toEqual([...Array(max).keys()]);
  expect(refused).toHaveLength(shots.length - max);
  expect(new Set(passed.map((s) => s.replica)).size).toBe(Math.min(max, 3));
  expect([...new Set(refused.map((s) => s.replica))].sort()).toEqual(['api-1', 'api-2', 'api-3']);
  expect(refused.some((s) => s.viaProxy)).toBe(true);
  for (const shot of refused) {
    const retryAfter = Number(header(shot, 'retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(WINDOW_S / 2);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_S);
    if (rateLimitHeaders) expect(header(shot, 'ratelimit-reset')).toBe(String(retryAfter));
  }
  if (rateLimitHeaders) {
    for (const shot of shots) {
      expect(header(shot, 'ratelimit-limit')).toBe(String(max));
      expect(header(shot, 'ratelimit-remaining'), `request ${shot.index}`).toBe(
        String(Math.max(0, max - shot.index - 1)),
      );
      const reset = Number(header(shot, 'ratelimit-reset'));
      expect(reset).toBeGreaterThan(WINDOW_S / 2);
      expect(reset).toBeLessThanOrEqual(WINDOW_S);
    }
  }
  return passed;
}

/** The standard error envelope of a refusal. */
function expectRefusals(shots: Shot[], code: string): void {
  for (const shot of shots.filter((s) => s.reply.status === 429)) {
    expect(shot.reply.body).toEqual({ success: false, error: expect.any(String), code });
  }
}

/** A client address of its own (TRUST_PROXY trusts loopback, so a direct request's X-Forwarded-For is believed). */
let addresses = 0;
const clientAddress = () => `198.51.100.${(addresses += 1)}`;
const from = (ip: string, options: CallOptions = {}): CallOptions => ({
  ...options,
  headers: { ...options.headers, 'x-forwarded-for': ip },
});

/**
 * Three API replicas behind HAProxy on one Redis, with small limits and 10-minute windows: the auth limiter (per
 * IP over /auth), the SCIM limiter (per IP and per token), and the per-user CPI read, compliance PDF and audit
 * chain limiters each allow `max` requests in a window however the requests are spread over the replicas.
 */
describe('rate limits across three replicas', () => {
  let cluster: Cluster;
  let db: pg.Pool;
  let owner: { token: string; orgId: string };
  beforeAll(async () => {
    cluster = await startCluster({
      workers: 0,
      env: {
        AUTH_RATE_LIMIT_MAX: String(MAX.auth),
        AUTH_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
        SCIM_RATE_LIMIT_MAX: String(MAX.scim),
        SCIM_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
        CPI_RATE_LIMIT_MAX: String(MAX.cpi),
        CPI_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
        PDF_RATE_LIMIT_MAX: String(MAX.pdf),
        PDF_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
        AUDIT_RATE_LIMIT_MAX: String(MAX.audit),
        AUDIT_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
      },
    });
    db = databaseOf(cluster);
    // Registered from an address of its own, so that no test's auth window includes it.
    const res = await call(
      cluster.base,
      'POST',
      '/api/v1/auth/register',
      from(clientAddress(), {
        body: {
          name: 'Owner',
          email: uniqueEmail('owner'),
          password: TEST_PASSWORD,
          organizationName: 'Limits',
        },
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    owner = { token: res.body.data.token, orgId: res.body.data.organization.id };
  });
  afterAll(async () => {
    await db?.end();
    await cluster?.stop();
  });

  it('has every replica counting in Redis', async () => {
    for (const replica of cluster.replicas) {
      expect(metricSum(await replica.metrics(), 'governance_redis_up'), replica.name).toBe(1);
    }
  });

  it('auth: one window per client address over every /auth route, whichever replica answers', async () => {
    const ip = clientAddress();
    const shots = await spread(cluster, countFor(MAX.auth), (base, i) =>
      i % 2
        ? call(base, 'GET', '/api/v1/auth/me', from(ip))
        : call(
            base,
            'POST',
            '/api/v1/auth/login',
            from(ip, { body: { email: 'nobody@example.com', password: 'wrong-password' } }),
          ),
    );
    const passed = expectOneSharedWindow(shots, MAX.auth, true);
    expect(passed.map((s) => s.reply.status)).toEqual(Array(MAX.auth).fill(401));
    expectRefusals(shots, 'RATE_LIMIT_EXCEEDED');
    // Another address has a window of its own.
    const other = await call(cluster.replicas[0]!.base!, 'GET', '/api/v1/auth/me', from(clientAddress()));
    expect(other.status).toBe(401);
    expect(other.headers.get('ratelimit-remaining')).toBe(String(MAX.auth - 1));
  });

  it('CPI reads: one window per user over GET /cpi and GET /cpi/analytics', async () => {
    const shots = await spread(cluster, countFor(MAX.cpi), (base, i) =>
      call(base, 'GET', i % 2 ? '/api/v1/cpi/analytics' : '/api/v1/cpi', { token: owner.token }),
    );
    const passed = expectOneSharedWindow(shots, MAX.cpi, true);
    expect(passed.map((s) => s.reply.status)).toEqual(Array(MAX.cpi).fill(200));
    expectRefusals(shots, 'RATE_LIMITED');
  });

  it('audit chain: one window per user over verification, export and signing', async () => {
    const routes = [
      ['POST', '/api/v1/audit/checkpoints'],
      ['GET', '/api/v1/audit/verify'],
      ['GET', '/api/v1/audit/export'],
    ] as const;
    const shots = await spread(cluster, countFor(MAX.audit), (base, i) => {
      const [method, path] = routes[i % routes.length]!;
      return call(base, method, path, { token: owner.token });
    });
    const passed = expectOneSharedWindow(shots, MAX.audit, true);
    expect(passed.map((s) => s.reply.status)).toEqual([201, 200, 200]);
    expectRefusals(shots, 'RATE_LIMITED');
  });

  it('compliance PDF: one window per user, so only `max` PDFs are rendered in the whole cluster', async () => {
    const shots = await spread(cluster, countFor(MAX.pdf), (base) =>
      call(base, 'GET', '/api/v1/reports/compliance', { token: owner.token }),
    );
    const passed = expectOneSharedWindow(shots, MAX.pdf, true);
    for (const shot of passed) {
      expect(shot.reply.status).toBe(200);
      expect(shot.reply.headers.get('content-type')).toMatch(/^application\/pdf/);
      expect(String(shot.reply.body).startsWith('%PDF-')).toBe(true);
    }
    expectRefusals(shots, 'RATE_LIMITED');
  });

  describe('SCIM', () => {
    let scimToken: string;
    beforeAll(async () => {
      // SCIM needs the enterprise plan; the plan is read on every request, so no replica holds the old one.
      await db.query(`update organizations set plan = 'enterprise' where id = $1`, [owner.orgId]);
      const res = await call(cluster.base, 'POST', '/api/v1/sso/scim-token', { token: owner.token });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      scimToken = res.body.data.token;
    });

    const expectScimRefusals = (shots: Shot[]) => {
      for (const shot of shots.filter((s) => s.reply.status === 429)) {
        expect(shot.reply.headers.get('content-type')).toMatch(/^application\/scim\+json/);
        expect(shot.reply.body).toMatchObject({
          schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
          status: '429',
        });
      }
    };

    it('one window per token, though every request comes from another address', async () => {
      const shots = await spread(cluster, countFor(MAX.scim), (base) =>
        call(base, 'GET', '/scim/v2/Users?count=0', from(clientAddress(), { token: scimToken })),
      );
      const passed = expectOneSharedWindow(shots, MAX.scim, false);
      expect(passed.map((s) => s.reply.status)).toEqual(Array(MAX.scim).fill(200));
      expectScimRefusals(shots);
    });

    it('one window per client address, counted before the token is checked', async () => {
      const ip = clientAddress();
      const shots = await spread(cluster, countFor(MAX.scim), (base) =>
        call(base, 'GET', '/scim/v2/Users?count=0', from(ip)),
      );
      const passed = expectOneSharedWindow(shots, MAX.scim, false);
      expect(passed.map((s) => s.reply.status)).toEqual(Array(MAX.scim).fill(401));
      expectScimRefusals(shots);
    });
  });
});
