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

function nested(depth: number, open: string, close: string, leaf = '1'): string {
  return open.repeat(depth) + leaf + close.repeat(depth);
}

describe('HTTP conventions', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: CONVENTIONS_SUITE_START, imports: [ConventionsProbeModule] });
  });
  afterAll(async () => ctx?.close());

  describe('hostile input', () => {
    const cases: [string, string, () => RequestOptions][] = [
      [
        'NUL bytes in the login e-mail and password',
        '/api/v1/auth/login',
        () => ({ body: { email: 'ada\u0000@example.com', password: 'Pass\u0000word-1' } }),
      ],
      [
        'a NUL byte in an otherwise valid registration name',
        '/api/v1/auth/register',
        () => ({ body: validRegistration({ name: 'Ada\u0000Lovelace' }) }),
      ],
      [
        'a NUL byte in an otherwise valid organization name',
        '/api/v1/auth/register',
        () => ({ body: validRegistration({ organizationName: 'Engines\u0000' }) }),
      ],
      [
        'an unpaired surrogate in a name and in a key',
        '/api/v1/auth/register',
        () => ({ payload: '{"name":"Ada \\ud800","\\udfff":1}', headers: JSON_HEADERS }),
      ],
      [
        'a body nested 5,000 objects deep',
        '/api/v1/auth/register',
        () => ({ payload: nested(5000, '{"a":', '}'), headers: JSON_HEADERS }),
      ],
      [
        'a field nested 5,000 objects deep',
        '/api/v1/auth/login',
        () => ({ payload: `{"email":${nested(5000, '{"a":', '}')},"password":"x"}`, headers: JSON_HEADERS }),
      ],
      [
        'a body nested 100,000 arrays deep',
        '/api/v1/auth/login',
        () => ({ payload: nested(100_000, '[', ']'), headers: JSON_HEADERS }),
      ],
      [
        'numbers beyond double range and 30-digit integers',
        '/api/v1/auth/register',
        () => ({
          payload:
            '{"name":1e999,"email":123456789012345678901234567890,"password":-1e309,"organizationName":0}',
          headers: JSON_HEADERS,
        }),
      ],
      [
        'an infinite count on an integer field',
        `${PROBE}/echo`,
        () => ({ payload: '{"name":"p","count":1e400,"inner":{"label":"x"}}', headers: JSON_HEADERS }),
      ],
      [
        'an array where an object is expected',
        '/api/v1/auth/login',
        () => ({ body: [{ email: 'ada@example.com', password: 'x' }] }),
      ],
      [
        'objects and arrays where strings are expected',
        '/api/v1/auth/register',
        () => ({
          body: {
            name: { $ne: null },
            email: ['ada@example.com'],
            password: { length: 20 },
            organizationName: [],
          },
        }),
      ],
      ['a top-level null', '/api/v1/auth/login', () => ({ payload: 'null', headers: JSON_HEADERS })],
      [
        'a top-level string',
        '/api/v1/auth/login',
        () => ({ payload: '"ada@example.com"', headers: JSON_HEADERS }),
      ],
      ['a top-level number', '/api/v1/auth/login', () => ({ payload: '42', headers: JSON_HEADERS })],
      [
        'a __proto__ key',
        '/api/v1/auth/login',
        () => ({
          payload: '{"__proto__":{"isAdmin":true},"email":"a@b.co","password":"x"}',
          headers: JSON_HEADERS,
        }),
      ],
      [
        'a constructor.prototype key',
        '/api/v1/auth/login',
        () => ({
          payload: '{"constructor":{"prototype":{"isAdmin":true}},"email":"a@b.co","password":"x"}',
          headers: JSON_HEADERS,
        }),
      ],
      [
        'a 500,000-character e-mail',
        '/api/v1/auth/login',
        () => ({ body: { email: `${'a'.repeat(500_000)}@example.com`, password: 'x' } }),
      ],
      [
        'a 10,000-character X-Svc-Version header',
        '/api/v1/auth/login',
        () => ({
          body: { email: 'a@b.co', password: 'x' },
          headers: { 'x-svc-version': 'x'.repeat(10_000) },
        }),
      ],
    ];

    it.each(cases)('answers %s with a 4xx error envelope, never a 500', async (_label, url, options) => {
      const res = await ctx.post(url, options());
      expect(res.statusCode, res.body.slice(0, 300)).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(500);
      const body = res.json();
      expect(body.success).toBe(false);
      expect(body.code).toMatch(/^[A-Z_]+$/);
      expect(body.code).not.toBe('INTERNAL_ERROR');
      expect(res.headers['x-request-id']).toMatch(UUID);
    });

    it('keeps serving after a hostile request', async () => {
      await ctx.post('/api/v1/auth/login', { payload: nested(5000, '{"a":', '}'), headers: JSON_HEADERS });
      const res = await ctx.get('/api/v1/health/live');
      expect(res.statusCode).toBe(200);
      expect(res.json().data.status).toBe('ok');
    });
  });
});
