import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RequestOptions, TestContext } from './support/app.js';
import {
  CONVENTIONS_SUITE_START,
  ConventionsProbeModule,
  JSON_HEADERS,
  PROBE,
  UUID,
  validRegistration,
} from './support/http-conventions-suite.js';
import { expectErrorEnvelope } from './support/assertions.js';

const ONE_MIB = 1024 * 1024;

describe('HTTP conventions', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: CONVENTIONS_SUITE_START, imports: [ConventionsProbeModule] });
  });
  afterAll(async () => ctx?.close());

  describe('success envelope', () => {
    it('wraps a handler result as {success: true, data} and nothing else', async () => {
      const res = await ctx.get('/api/v1/health');
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['data', 'success']);
      expect(body.success).toBe(true);
      expect(body.data).toMatchObject({ status: 'ok', checks: { database: 'up' } });
    });

    it('answers a valid POST with 201 and the validated DTO in data', async () => {
      const res = await ctx.post(`${PROBE}/echo`, {
        body: { name: 'probe', count: 3, inner: { label: 'x' } },
      });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({ success: true, data: { name: 'probe', count: 3, inner: { label: 'x' } } });
    });
  });

  describe('unknown routes', () => {
    it.each([
      ['GET', '/api/v1/no-such-route'],
      ['POST', '/api/v1/no-such-route'],
      ['GET', '/no-such-route'],
      ['POST', '/no-such-route'],
      ['DELETE', '/api/v1/health'],
    ])('answers %s %s with 404 NOT_FOUND in the error envelope', async (method, url) => {
      const res = await ctx.request(method, url, method === 'POST' ? { body: { anything: 1 } } : {});
      expectErrorEnvelope(res, 404, 'NOT_FOUND');
    });
  });

  describe('request bodies', () => {
    it('answers malformed JSON with 400 VALIDATION_ERROR', async () => {
      const res = await ctx.post('/api/v1/auth/register', {
        payload: '{"name": "Ada", "email":',
        headers: JSON_HEADERS,
      });
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    });

    it('answers an empty body declared as JSON with 400 VALIDATION_ERROR', async () => {
      const res = await ctx.post('/api/v1/auth/register', { payload: '', headers: JSON_HEADERS });
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    });

    it('answers a registration with a bad e-mail, a short password and an unknown property with 400 and one detail per field', async () => {
      const res = await ctx.post('/api/v1/auth/register', {
        body: validRegistration({ email: 'not-an-email', password: 'Sh0rt', nickname: 'ada' }),
      });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      const details = body.details as { field: string; message: string }[];
      expect(Array.isArray(details)).toBe(true);
      for (const detail of details) {
        expect(Object.keys(detail).sort()).toEqual(['field', 'message']);
        expect(detail.message.length).toBeGreaterThan(0);
      }
      expect([...new Set(details.map((d) => d.field))].sort()).toEqual(['email', 'nickname', 'password']);
      expect(details.find((d) => d.field === 'password')!.message).toMatch(/10 characters/);
      expect(details.find((d) => d.field === 'nickname')!.message).toMatch(/should not exist/);
    });

    it('names nested fields with a dotted path and out-of-range numbers by their field', async () => {
      const res = await ctx.post(`${PROBE}/echo`, {
        body: { name: 'probe', count: 11, inner: { label: 42 } },
      });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      const fields = (body.details as { field: string }[]).map((d) => d.field);
      expect([...new Set(fields)].sort()).toEqual(['count', 'inner.label']);
    });

    it('answers a JSON body one byte over 1 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
      const payload = JSON.stringify({ name: '' });
      const padded = payload.slice(0, -2) + 'x'.repeat(ONE_MIB + 1 - payload.length) + '"}';
      expect(Buffer.byteLength(padded)).toBe(ONE_MIB + 1);
      const res = await ctx.post(`${PROBE}/echo`, { payload: padded, headers: JSON_HEADERS });
      expectErrorEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('reads a JSON body of exactly 1 MiB (and validates it rather than refusing it)', async () => {
      const payload = JSON.stringify({ name: '' });
      const padded = payload.slice(0, -2) + 'x'.repeat(ONE_MIB - payload.length) + '"}';
      expect(Buffer.byteLength(padded)).toBe(ONE_MIB);
      const res = await ctx.post(`${PROBE}/echo`, { payload: padded, headers: JSON_HEADERS });
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    });

    // Each payload carries a complete registration in its own format: only JSON may be read.
    type Registration = Record<string, string>;
    it.each<[string, (r: Registration) => string]>([
      [
        'application/xml',
        (r) =>
          `<user>${Object.entries(r)
            .map(([k, v]) => `<${k}>${v}</${k}>`)
            .join('')}</user>`,
      ],
      ['application/x-www-form-urlencoded', (r) => new URLSearchParams(r).toString()],
      ['text/plain', (r) => JSON.stringify(r)],
      [
        'multipart/form-data; boundary=x',
        (r) =>
          Object.entries(r)
            .map(([k, v]) => `--x\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
            .join('') + '--x--\r\n',
      ],
    ])(
      'refuses a %s registration with 415 UNSUPPORTED_MEDIA_TYPE and creates no account',
      async (contentType, encode) => {
        const registration = validRegistration() as Registration;
        const res = await ctx.post('/api/v1/auth/register', {
          payload: encode(registration),
          headers: { 'content-type': contentType },
        });
        expectErrorEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
        const login = await ctx.post('/api/v1/auth/login', {
          body: { email: registration.email, password: registration.password },
        });
        expectErrorEnvelope(login, 401, 'INVALID_CREDENTIALS');
      },
    );
  });

  describe('unexpected errors', () => {
    it('answers an unexpected error with 500 INTERNAL_ERROR carrying only the request id, no stack, SQL or message text', async () => {
      const res = await ctx.get(`${PROBE}/boom`);
      const body = expectErrorEnvelope(res, 500, 'INTERNAL_ERROR');
      expect(Object.keys(body).sort()).toEqual(['code', 'error', 'requestId', 'success']);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(body.requestId).toBe(res.headers['x-request-id']);
      for (const leak of ['SELECT', 'secret', 'boom', 'stack', 'Error:', '.ts:', '.js:']) {
        expect(res.body).not.toContain(leak);
      }
    });

    it('puts an incoming well-formed X-Request-Id into the 500 body', async () => {
      const res = await ctx.get(`${PROBE}/boom`, { headers: { 'x-request-id': 'trace-500.abc:1' } });
      const body = expectErrorEnvelope(res, 500, 'INTERNAL_ERROR');
      expect(res.headers['x-request-id']).toBe('trace-500.abc:1');
      expect(body.requestId).toBe('trace-500.abc:1');
    });
  });

  describe('request ids', () => {
    const cases: [string, string, string, RequestOptions][] = [
      ['200 under /api/v1', 'GET', '/api/v1/health', {}],
      ['404 under /api/v1', 'GET', '/api/v1/no-such-route', {}],
      ['401 under /api/v1', 'GET', '/api/v1/auth/me', {}],
      ['400 for malformed JSON', 'POST', '/api/v1/auth/login', { payload: '{', headers: JSON_HEADERS }],
      [
        '413 for an oversized body',
        'POST',
        '/api/v1/auth/login',
        { payload: `"${'x'.repeat(ONE_MIB + 10)}"`, headers: JSON_HEADERS },
      ],
      ['500 for an unexpected error', 'GET', `${PROBE}/boom`, {}],
      ['200 outside /api (the OpenAPI document)', 'GET', '/docs/openapi.json', {}],
      ['404 outside /api', 'GET', '/no-such-route', {}],
    ];
    it.each(cases)('sets a generated X-Request-Id on a %s', async (_label, method, url, options) => {
      const res = await ctx.request(method, url, options);
      expect(res.headers['x-request-id']).toMatch(UUID);
    });

    it('generates a different id for each request', async () => {
      const [a, b] = await Promise.all([ctx.get('/api/v1/health'), ctx.get('/api/v1/health')]);
      expect(a.headers['x-request-id']).toMatch(UUID);
      expect(b.headers['x-request-id']).toMatch(UUID);
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });

    it.each([['req-123'], ['upstream.trace:42_A'], ['a'.repeat(128)]])(
      'echoes the well-formed incoming X-Request-Id %s',
      async (id) => {
        const res = await ctx.get('/api/v1/health', { headers: { 'x-request-id': id } });
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-request-id']).toBe(id);
      },
    );

    it.each([['has spaces <script>'], ['a'.repeat(129)], ['semi;colon']])(
      'replaces the malformed incoming X-Request-Id %s with a generated one',
      async (id) => {
        const res = await ctx.get('/api/v1/health', { headers: { 'x-request-id': id } });
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-request-id']).toMatch(UUID);
      },
    );

    it('sets X-Request-Id on a CORS preflight answer', async () => {
      const res = await ctx.request('OPTIONS', '/api/v1/health', {
        headers: { origin: 'http://app.gov.test', 'access-control-request-method': 'GET' },
      });
      expect(res.statusCode).toBeLessThan(300);
      expect(res.headers['x-request-id']).toMatch(UUID);
    });
  });

  describe('requests the router refuses before any hook', () => {
    it('answers a URL with malformed percent-encoding with 400 VALIDATION_ERROR in the envelope, with X-Request-Id', async () => {
      const res = await ctx.get('/api/v1/auth/%E0%A4%A');
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.headers['x-svc-api-version']).toBe('v1');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    });

    it('answers a path parameter over 256 characters with 414 in the envelope, with X-Request-Id and no framework code', async () => {
      const res = await ctx.get(`/api/v1/audit/${'a'.repeat(300)}`);
      expect(res.statusCode).toBe(414);
      const body = res.json();
      expect(body.success).toBe(false);
      expect(body.code).toMatch(/^[A-Z_]+$/);
      expect(body.code).not.toMatch(/^FST_/);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(res.headers['x-svc-api-version']).toBe('v1');
    });
  });

  describe('security headers', () => {
    it.each([
      ['a success', 'GET', '/api/v1/health'],
      ['a 404', 'GET', '/api/v1/no-such-route'],
      ['a 401', 'GET', '/api/v1/auth/me'],
      ['a 500', 'GET', `${PROBE}/boom`],
      ['the OpenAPI document', 'GET', '/docs/openapi.json'],
    ])('sends helmet headers on %s', async (_label, method, url) => {
      const res = await ctx.request(method, url);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['x-powered-by']).toBeUndefined();
    });
  });

  describe('authentication', () => {
    it('accepts a session token from registration on a JWT route (control for the 401 cases)', async () => {
      const registered = await ctx.register();
      const res = await ctx.get('/api/v1/auth/me', { token: registered.token });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.user.id).toBe(registered.user.id);
    });

    it('answers a JWT route without credentials with 401 UNAUTHORIZED', async () => {
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me'), 401, 'UNAUTHORIZED');
    });

    it.each([['Basic dXNlcjpwYXNz'], ['Bearer'], ['Bearer two tokens'], ['Token abc.def.ghi'], ['bearer']])(
      'answers the malformed Authorization header "%s" with 401 UNAUTHORIZED',
      async (authorization) => {
        const res = await ctx.get('/api/v1/auth/me', { headers: { authorization } });
        expectErrorEnvelope(res, 401, 'UNAUTHORIZED');
      },
    );

    it('answers a garbage bearer with 401 UNAUTHORIZED', async () => {
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token: 'not-a-jwt' }), 401, 'UNAUTHORIZED');
    });

    it('answers an unsigned (alg none) JWT with 401 UNAUTHORIZED', async () => {
      const unsigned = jwt.sign(
        { _id: 'a'.repeat(24), organizationId: 'b'.repeat(24), jti: 'x', exp: 4_102_444_800 },
        '',
        {
          algorithm: 'none',
        },
      );
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token: unsigned }), 401, 'UNAUTHORIZED');
    });

    it('answers a JWT signed with another secret with 401 UNAUTHORIZED', async () => {
      const forged = jwt.sign(
        {
          _id: 'a'.repeat(24),
          sub: 'a'.repeat(24),
          organizationId: 'b'.repeat(24),
          role: 'owner',
          jti: 'x',
          exp: 4_102_444_800,
        },
        'another-secret-'.padEnd(48, 'y'),
        { algorithm: 'HS256' },
      );
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token: forged }), 401, 'UNAUTHORIZED');
    });

    it('answers an unknown X-API-Key with 401 UNAUTHORIZED', async () => {
      const res = await ctx.get('/api/v1/auth/me', { apiKey: 'svc_ws_0123456789abcdef0123456789abcdef' });
      expectErrorEnvelope(res, 401, 'UNAUTHORIZED');
    });
  });

  describe('paging bounds', () => {
    it('refuses a page deeper than 100,000 with 400 instead of failing in the database', async () => {
      const reg = await ctx.register();
      for (const page of ['100001', '1e300', '100000000000000000']) {
        const res = await ctx.get('/api/v1/audit', { token: reg.token, query: { page } });
        expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      }
      expect(
        (await ctx.get('/api/v1/audit', { token: reg.token, query: { page: '100000' } })).statusCode,
      ).toBe(200);
    });
  });
});
