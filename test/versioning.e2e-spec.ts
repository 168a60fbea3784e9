import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSIONS, type SchemaVersion } from '#platform';
import { type RequestOptions, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';

const NOW = '2026-11-21T12:00:00.000Z';
const CURRENT = '2026-04-11';
const GUIDE_URL = 'http://gov.test/docs/migrations/unversioned-to-v1';
const DEPRECATION_LINK = `<${GUIDE_URL}>; rel="deprecation"`;
const LEGACY_SUNSET_HTTP_DATE = 'Mon, 12 Apr 2027 00:00:00 GMT';

/**
 * The registry entry for 2026-04-11 and its trace limits, written out by hand (docs/dashboard-developers.md,
 * "API conventions").
 */
const SPEC_CURRENT_VERSION = {
  version: CURRENT,
  status: 'current',
  recommended: true,
  sunset: null,
  limits: {
    inputContext: {
      maxPromptLength: 50_000,
      maxSystemPromptLength: 50_000,
      maxContextBytes: 102_400,
      maxConversationIdLength: 256,
    },
    outputDecision: {
      maxActionObjectBytes: 10_240,
      maxRationaleLength: 50_000,
      maxAlternatives: 10,
      maxToolCalls: 50,
    },
  },
};

const DEPRECATED: SchemaVersion = {
  version: '2025-10-01',
  status: 'deprecated',
  recommended: false,
  sunset: '2027-01-15',
  limits: structuredClone(SCHEMA_VERSIONS[0]!.limits),
};

function expectNoDeprecationHeaders(res: LightMyRequestResponse): void {
  expect(res.headers.deprecation).toBeUndefined();
  expect(res.headers.sunset).toBeUndefined();
  expect(res.headers.link).toBeUndefined();
}

function expectLegacyHeaders(res: LightMyRequestResponse): void {
  expect(res.headers.deprecation).toBe('true');
  expect(res.headers.sunset).toBe(LEGACY_SUNSET_HTTP_DATE);
  expect(res.headers.link).toBe(DEPRECATION_LINK);
}

describe('versioning', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: NOW });
  });
  afterAll(async () => ctx?.close());
  beforeEach(() => ctx.clock.set(NOW));

  describe('URL axis headers', () => {
    const cases: [string, string, string, RequestOptions, number][] = [
      ['a 200 from /api/v1/health', 'GET', '/api/v1/health', {}, 200],
      ['a 200 from /api/v1/versions', 'GET', '/api/v1/versions', {}, 200],
      ['a 404 for an unknown /api/v1 route', 'GET', '/api/v1/no-such-route', {}, 404],
      ['a 404 for an unknown POST route', 'POST', '/api/v1/no-such-route', { body: {} }, 404],
      ['a 401 without credentials', 'GET', '/api/v1/auth/me', {}, 401],
      ['a 401 for a garbage bearer', 'GET', '/api/v1/auth/me', { token: 'garbage' }, 401],
      ['a 400 validation error', 'POST', '/api/v1/auth/register', { body: {} }, 400],
    ];
    it.each(cases)(
      'sets X-Svc-API-Version v1 and X-Svc-Version %s',
      async (_label, method, url, options, status) => {
        const res = await ctx.request(method, url, options);
        expect(res.statusCode).toBe(status);
        expect(res.headers['x-svc-api-version']).toBe('v1');
        expect(res.headers['x-svc-version']).toBe(CURRENT);
      },
    );

    it('sends no Deprecation, Sunset or Link headers on /api/v1 or the root /health', async () => {
      for (const url of ['/api/v1/health', '/api/v1/versions', '/health']) {
        const res = await ctx.get(url);
        expect(res.statusCode).toBe(200);
        expectNoDeprecationHeaders(res);
      }
    });

    it('exposes the version and deprecation headers to browsers through CORS', async () => {
      const res = await ctx.get('/api/v1/health', { headers: { origin: 'http://app.gov.test' } });
      const exposed = String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
      for (const header of [
        'x-request-id',
        'x-svc-version',
        'x-svc-api-version',
        'deprecation',
        'sunset',
        'link',
      ]) {
        expect(exposed).toContain(header);
      }
    });
  });

  describe('GET /api/v1/versions', () => {
    it('returns the registry: exactly 2026-04-11, current, recommended, without sunset, with its trace limits', async () => {
      const res = await ctx.get('/api/v1/versions');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, data: [SPEC_CURRENT_VERSION] });
    });
  });

  describe('legacy unversioned mount', () => {
    it('serves /api/versions with the same payload as /api/v1/versions and the deprecation headers', async () => {
      const [legacy, v1] = await Promise.all([ctx.get('/api/versions'), ctx.get('/api/v1/versions')]);
      expect(legacy.statusCode).toBe(200);
      expect(legacy.json()).toEqual(v1.json());
      expectLegacyHeaders(legacy);
      expect(legacy.headers['x-svc-api-version']).toBe('v1');
      expect(legacy.headers['x-svc-version']).toBe(CURRENT);
    });

    it('serves /api/health with the same payload as /api/v1/health and the deprecation headers', async () => {
      const [legacy, v1] = await Promise.all([ctx.get('/api/health'), ctx.get('/api/v1/health')]);
      expect(legacy.statusCode).toBe(200);
      // uptime (whole seconds) and the event-loop delay may change between the two requests.
      const { uptime: legacyUptime, checks: legacyChecks, ...legacyData } = legacy.json().data;
      const { uptime: v1Uptime, checks: v1Checks, ...v1Data } = v1.json().data;
      expect(typeof legacyUptime).toBe('number');
      expect(typeof v1Uptime).toBe('number');
      expect(legacyData).toEqual(v1Data);
      expect(legacyData).toEqual({ status: 'ok', timestamp: NOW });
      for (const checks of [legacyChecks, v1Checks]) {
        expect(checks).toEqual({
          database: 'up',
          eventLoop: expect.stringMatching(/^(starting|ok|slow)$/),
          eventLoopDelayMs: expect.any(Number),
        });
      }
      expect(legacy.json().success).toBe(true);
      expectLegacyHeaders(legacy);
    });

    it('carries the deprecation headers on legacy errors too (401 on /api/auth/me)', async () => {
      const res = await ctx.get('/api/auth/me');
      expectErrorEnvelope(res, 401, 'UNAUTHORIZED');
      expectLegacyHeaders(res);
    });

    it('still answers 200 one millisecond before 2027-04-12T00:00:00Z', async () => {
      ctx.clock.set('2027-04-11T23:59:59.999Z');
      for (const url of ['/api/versions', '/api/health']) {
        const res = await ctx.get(url);
        expect(res.statusCode).toBe(200);
        expect(res.json().success).toBe(true);
        expectLegacyHeaders(res);
      }
    });

    it.each([['2027-04-12T00:00:00.000Z'], ['2027-04-12T00:00:00.001Z'], ['2030-01-01T00:00:00.000Z']])(
      'answers the legacy routes with 410 GONE and the Link header at %s',
      async (instant) => {
        ctx.clock.set(instant);
        for (const url of ['/api/versions', '/api/health']) {
          const res = await ctx.get(url);
          const body = expectErrorEnvelope(res, 410, 'GONE');
          expect(body.error).toMatch(/\/api\/v1/);
          expect(res.headers.link).toBe(DEPRECATION_LINK);
          expect(res.headers['x-svc-api-version']).toBe('v1');
        }
      },
    );

    it('keeps /api/v1 and the root /health answering 200 after the legacy sunset', async () => {
      ctx.clock.set('2027-04-12T00:00:00.000Z');
      for (const url of ['/api/v1/versions', '/api/v1/health', '/health']) {
        const res = await ctx.get(url);
        expect(res.statusCode).toBe(200);
        expect(res.json().success).toBe(true);
        expectNoDeprecationHeaders(res);
      }
    });

    it('serves the migration guide named by the Link header as text/html without credentials, also after the sunset', async () => {
      const legacy = await ctx.get('/api/health');
      const linked = /^<([^>]+)>; rel="deprecation"$/.exec(String(legacy.headers.link));
      expect(linked).not.toBeNull();
      const path = new URL(linked![1]!).pathname;
      expect(path).toBe('/docs/migrations/unversioned-to-v1');
      for (const instant of [NOW, '2027-04-12T00:00:00.000Z']) {
        ctx.clock.set(instant);
        const res = await ctx.get(path);
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.body).toContain('/api/v1');
        expect(res.body).toContain(LEGACY_SUNSET_HTTP_DATE);
      }
    });
  });

  describe('schema axis (X-Svc-Version)', () => {
    it('accepts X-Svc-Version 2026-04-11 and answers under it without deprecation headers', async () => {
      const res = await ctx.get('/api/v1/health', { headers: { 'x-svc-version': CURRENT } });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.status).toBe('ok');
      expect(res.headers['x-svc-version']).toBe(CURRENT);
      expectNoDeprecationHeaders(res);
    });

    it('answers an exactly requested unknown version with 400 VERSION_UNSUPPORTED listing the supported versions, never another version', async () => {
      const res = await ctx.get('/api/v1/versions', { headers: { 'x-svc-version': '2020-01-01' } });
      const body = expectErrorEnvelope(res, 400, 'VERSION_UNSUPPORTED');
      expect(body.supportedVersions).toEqual([CURRENT]);
      expect(body.error).toContain('2020-01-01');
      expect(body.error).toContain(CURRENT);
      // Substituting would mean serving under (and announcing) the latest version instead.
      expect(res.headers['x-svc-version']).not.toBe(CURRENT);
    });

    it.each([['latest'], ['2026-4-11'], ['2026/04/11'], ['20260411'], ['2026-04-11T00:00:00Z'], ['v1']])(
      'answers the malformed X-Svc-Version %s with 400 VERSION_UNSUPPORTED',
      async (value) => {
        const res = await ctx.get('/api/v1/health', { headers: { 'x-svc-version': value } });
        const body = expectErrorEnvelope(res, 400, 'VERSION_UNSUPPORTED');
        expect(body.supportedVersions).toEqual([CURRENT]);
        expect(res.headers['x-svc-api-version']).toBe('v1');
      },
    );

    it('checks X-Svc-Version before credentials: an unknown version on a JWT route is 400, not 401', async () => {
      const res = await ctx.get('/api/v1/auth/me', { headers: { 'x-svc-version': '2020-01-01' } });
      expectErrorEnvelope(res, 400, 'VERSION_UNSUPPORTED');
    });
  });

  describe('OpenAPI document', () => {
    it('serves /docs/openapi.json as OpenAPI 3.1 describing the /api/v1 routes', async () => {
      const res = await ctx.get('/docs/openapi.json');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const doc = res.json();
      expect(typeof doc.openapi).toBe('string');
      expect(doc.openapi.startsWith('3.1')).toBe(true);
      expect(doc.paths['/api/v1/auth/register']?.post).toBeDefined();
      expect(doc.paths['/api/v1/versions']?.get).toBeDefined();
      const unversioned = Object.keys(doc.paths).filter(
        (p) => p.startsWith('/api/') && !p.startsWith('/api/v1/'),
      );
      expect(unversioned).toEqual([]);
    });
  });
});

describe('versioning with a deprecated schema version in the registry', () => {
  let ctx: TestContext;
  const DEPRECATED_SUNSET_HTTP_DATE = 'Fri, 15 Jan 2027 00:00:00 GMT';

  beforeAll(async () => {
    ctx = await TestContext.create({ now: NOW, versions: [DEPRECATED, SCHEMA_VERSIONS[0]!] });
  });
  afterAll(async () => ctx?.close());
  beforeEach(() => ctx.clock.set(NOW));

  it('lists both versions in GET /api/v1/versions', async () => {
    const res = await ctx.get('/api/v1/versions');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      {
        version: '2025-10-01',
        status: 'deprecated',
        recommended: false,
        sunset: '2027-01-15',
        limits: SPEC_CURRENT_VERSION.limits,
      },
      SPEC_CURRENT_VERSION,
    ]);
  });

  it('applies the latest current version, not the deprecated one, to a request without X-Svc-Version', async () => {
    const res = await ctx.get('/api/v1/health');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-svc-version']).toBe(CURRENT);
    expectNoDeprecationHeaders(res);
  });

  it('answers under the deprecated version before its sunset with Deprecation, Sunset and Link headers', async () => {
    const res = await ctx.get('/api/v1/health', { headers: { 'x-svc-version': '2025-10-01' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.status).toBe('ok');
    expect(res.headers['x-svc-version']).toBe('2025-10-01');
    expect(res.headers['x-svc-api-version']).toBe('v1');
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.sunset).toBe(DEPRECATED_SUNSET_HTTP_DATE);
    expect(res.headers.link).toBe(DEPRECATION_LINK);
  });

  it('still answers under the deprecated version one millisecond before its sunset', async () => {
    ctx.clock.set('2027-01-14T23:59:59.999Z');
    const res = await ctx.get('/api/v1/health', { headers: { 'x-svc-version': '2025-10-01' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-svc-version']).toBe('2025-10-01');
    expect(res.headers.sunset).toBe(DEPRECATED_SUNSET_HTTP_DATE);
  });

  it.each([['2027-01-15T00:00:00.000Z'], ['2027-03-01T00:00:00.000Z']])(
    'answers the deprecated version with 410 VERSION_SUNSET and the Link header at %s, while 2026-04-11 still answers',
    async (instant) => {
      ctx.clock.set(instant);
      const sunset = await ctx.get('/api/v1/health', { headers: { 'x-svc-version': '2025-10-01' } });
      const body = expectErrorEnvelope(sunset, 410, 'VERSION_SUNSET');
      expect(body.error).toContain('2025-10-01');
      expect(sunset.headers.link).toBe(DEPRECATION_LINK);
      expect(sunset.headers['x-svc-version']).not.toBe(CURRENT);

      const current = await ctx.get('/api/v1/health', { headers: { 'x-svc-version': CURRENT } });
      expect(current.statusCode).toBe(200);
      expect(current.headers['x-svc-version']).toBe(CURRENT);
      const unpinned = await ctx.get('/api/v1/health');
      expect(unpinned.statusCode).toBe(200);
      expect(unpinned.headers['x-svc-version']).toBe(CURRENT);
    },
  );

  it('lists both versions in the 400 for an unknown version', async () => {
    const res = await ctx.get('/api/v1/health', { headers: { 'x-svc-version': '2020-01-01' } });
    const body = expectErrorEnvelope(res, 400, 'VERSION_UNSUPPORTED');
    expect([...(body.supportedVersions as string[])].sort()).toEqual(['2025-10-01', CURRENT]);
  });
});
