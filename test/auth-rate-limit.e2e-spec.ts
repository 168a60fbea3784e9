import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestContext } from './support/app.js';

const WINDOW_MS = 15 * 60 * 1000;
const randomIp = () => `10.${randomInt(0, 255)}.${randomInt(0, 255)}.${randomInt(1, 254)}`;

describe('auth limiter (in memory)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ config: { authRateLimit: { max: 100, windowMs: WINDOW_MS } } });
  });
  afterAll(async () => ctx?.close());

  const hit = (ip: string, url = '/api/v1/auth/login', options: { token?: string; body?: unknown } = {}) =>
    ctx.app.inject({
      method: url.endsWith('/me') ? 'GET' : 'POST',
      url,
      remoteAddress: ip,
      headers: {
        'content-type': 'application/json',
        ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      },
      payload: url.endsWith('/me')
        ? undefined
        : JSON.stringify(options.body ?? { email: 'x@example.com', password: 'nope' }),
    });

  it('allows 100 requests per IP in 15 minutes over every /auth route, then answers 429 with Retry-After', async () => {
    const ip = randomIp();
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++)
      statuses.push((await hit(ip, i % 2 ? '/api/v1/auth/login' : '/api/v1/auth/me')).statusCode);
    expect(statuses.every((s) => s === 401)).toBe(true);
    const refused = await hit(ip);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      success: false,
      error: expect.any(String),
      code: 'RATE_LIMIT_EXCEEDED',
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
  });

  it('refuses with 429 before validation and authentication: a bad body or a bad token no longer gets 400/401', async () => {
    const ip = randomIp();
    for (let i = 0; i < 100; i++) await hit(ip);
    const badBody = await hit(ip, '/api/v1/auth/login', { body: { nonsense: true } });
    expect(badBody.statusCode).toBe(429);
    const badToken = await hit(ip, '/api/v1/auth/me', { token: 'garbage' });
    expect(badToken.statusCode).toBe(429);
    expect(badToken.json().code).toBe('RATE_LIMIT_EXCEEDED');
  });

  it('counts per IP, leaves routes outside /auth alone, and opens again when the window ends', async () => {
    const ip = randomIp();
    for (let i = 0; i < 101; i++) await hit(ip);
    expect((await hit(ip)).statusCode).toBe(429);
    expect((await hit(randomIp())).statusCode).toBe(401);
    const health = await ctx.app.inject({ method: 'GET', url: '/api/v1/health', remoteAddress: ip });
    expect(health.statusCode).toBe(200);
    ctx.clock.advance(WINDOW_MS);
    expect((await hit(ip)).statusCode).toBe(401);
  });

  it('counts percent-encoded spellings of /auth paths in the same bucket', async () => {
    const ip = randomIp();
    for (let i = 0; i < 100; i++) await hit(ip);
    for (const url of ['/api/v1/%61uth/login', '/api/v1/a%75th/login', '/api/%61uth/login']) {
      const res = await hit(ip, url);
      expect(res.statusCode).toBe(429);
      expect(res.json().code).toBe('RATE_LIMIT_EXCEEDED');
    }
  });

  it('applies to the legacy mount too', async () => {
    const ip = randomIp();
    for (let i = 0; i < 100; i++) await hit(ip);
    const legacy = await ctx.app.inject({ method: 'GET', url: '/api/auth/me', remoteAddress: ip });
    expect(legacy.statusCode).toBe(429);
  });
});

describe('auth limiter shared through Redis by two replicas', () => {
  let a: TestContext;
  let b: TestContext;
  beforeAll(async () => {
    const config = {
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      authRateLimit: { max: 100, windowMs: WINDOW_MS },
    };
    a = await TestContext.create({ config });
    b = await TestContext.create({ config });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('counts requests to either replica in one window: the 101st is refused wherever it lands', async () => {
    const ip = randomIp();
    const send = (ctx: TestContext) =>
      ctx.app.inject({ method: 'GET', url: '/api/v1/auth/me', remoteAddress: ip });
    for (let i = 0; i < 50; i++) expect((await send(a)).statusCode).toBe(401);
    for (let i = 0; i < 50; i++) expect((await send(b)).statusCode).toBe(401);
    const onA = await send(a);
    const onB = await send(b);
    expect(onA.statusCode).toBe(429);
    expect(onB.statusCode).toBe(429);
    expect(Number(onB.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is unaffected on both replicas.
    const other = randomIp();
    expect(
      (await a.app.inject({ method: 'GET', url: '/api/v1/auth/me', remoteAddress: other })).statusCode,
    ).toBe(401);
  });
});

describe('auth limiter behind a proxy (TRUST_PROXY)', () => {
  const limited = (config: Record<string, unknown>) =>
    TestContext.create({ config: { authRateLimit: { max: 3, windowMs: WINDOW_MS }, ...config } });
  const send = (ctx: TestContext, forwardedFor: string) =>
    ctx.app.inject({
      method: 'GET',
      url: '/api/v1/auth/me',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': forwardedFor },
    });

  it('counts per forwarded client address when the proxy is trusted', async () => {
    const ctx = await limited({ trustProxy: true });
    try {
      const [first, second] = [randomIp(), randomIp()];
      for (let i = 0; i < 3; i++) expect((await send(ctx, first)).statusCode).toBe(401);
      expect((await send(ctx, first)).statusCode).toBe(429);
      expect((await send(ctx, second)).statusCode).toBe(401);
    } finally {
      await ctx.close();
    }
  });

  it('ignores X-Forwarded-For when no proxy is trusted, so a client cannot pick a fresh address', async () => {
    const ctx = await limited({ trustProxy: false });
    try {
      for (let i = 0; i < 3; i++) expect((await send(ctx, randomIp())).statusCode).toBe(401);
      const res = await send(ctx, randomIp());
      expect(res.statusCode).toBe(429);
      expect(res.json().code).toBe('RATE_LIMIT_EXCEEDED');
    } finally {
      await ctx.close();
    }
  });
});

describe('client address from a trusted proxy', () => {
  it('records no address when X-Forwarded-For is not an address, instead of failing the login', async () => {
    const ctx = await TestContext.create({ config: { trustProxy: true } });
    try {
      const reg = await ctx.register();
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        remoteAddress: '127.0.0.1',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': 'x'.repeat(80) },
        payload: JSON.stringify({ email: reg.user.email, password: reg.password }),
      });
      expect(res.statusCode).toBe(200);
      const audit = await ctx.get('/api/v1/audit', { token: reg.token, query: { eventType: 'auth.login' } });
      expect(audit.json().data[0].ip).toBeNull();
    } finally {
      await ctx.close();
    }
  });
});
