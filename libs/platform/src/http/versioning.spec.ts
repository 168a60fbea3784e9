import { describe, expect, it } from 'vitest';
import { FixedClock } from '../clock/clock.js';
import type { AppConfig } from '../config/app-config.js';
import { AppError } from './app-error.js';
import {
  decodeUnreservedInPath,
  rewriteLegacyUrl,
  SCHEMA_VERSIONS,
  type SchemaVersion,
  VersioningService,
} from './versioning.js';

describe('rewriteLegacyUrl', () => {
  it.each([
    ['/api/traces?page=2', '/api/v1/traces?page=2', true],
    ['/api/auth/login', '/api/v1/auth/login', true],
    ['/api/v1/traces', '/api/v1/traces', false],
    ['/api/v2/traces', '/api/v2/traces', false],
    ['/health', '/api/v1/health', false],
    ['/docs/openapi.json', '/docs/openapi.json', false],
    ['/scim/v2/Users', '/scim/v2/Users', false],
    ['/apiary', '/apiary', false],
  ])('%s → %s (legacy: %s)', (url, rewritten, legacy) => {
    const req: { url: string; svcLegacy?: boolean } = { url };
    expect(rewriteLegacyUrl(req)).toBe(rewritten);
    expect(req.svcLegacy ?? false).toBe(legacy);
  });
});

describe('VersioningService.resolve', () => {
  const deprecated: SchemaVersion = {
    ...SCHEMA_VERSIONS[0]!,
    version: '2025-10-01',
    status: 'deprecated',
    recommended: false,
    sunset: '2027-01-15',
  };
  const config = { publicUrl: 'https://gov.example' } as AppConfig;
  const make = (now: string) =>
    new VersioningService([SCHEMA_VERSIONS[0]!, deprecated], config, new FixedClock(new Date(now)));

  it('applies the latest current version when no header is sent', () => {
    expect(make('2026-11-21T00:00:00Z').resolve(undefined).version.version).toBe('2026-04-11');
  });

  it('never substitutes a version for an exactly requested unknown one', () => {
    const err = (() => {
      try {
        make('2026-11-21T00:00:00Z').resolve('2026-04-12');
      } catch (e) {
        return e as AppError;
      }
    })();
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 400, code: 'VERSION_UNSUPPORTED' });
    expect(err?.extra).toEqual({ supportedVersions: ['2026-04-11', '2025-10-01'] });
  });

  it('refuses an empty or blank header as malformed instead of treating it as absent', () => {
    for (const requested of ['', '   ']) {
      expect(() => make('2026-11-21T00:00:00Z').resolve(requested)).toThrow(
        expect.objectContaining({ status: 400, code: 'VERSION_UNSUPPORTED' }),
      );
    }
    expect(make('2026-11-21T00:00:00Z').resolve(undefined).version.version).toBe('2026-04-11');
  });

  it('marks a deprecated version with its sunset and refuses it from the sunset date', () => {
    const before = make('2027-01-14T23:59:59.999Z').resolve('2025-10-01');
    expect(before.headers).toEqual({
      Deprecation: 'true',
      Sunset: 'Fri, 15 Jan 2027 00:00:00 GMT',
      Link: '<https://gov.example/docs/migrations/unversioned-to-v1>; rel="deprecation"',
    });
    expect(() => make('2027-01-15T00:00:00Z').resolve('2025-10-01')).toThrow(
      expect.objectContaining({ status: 410, code: 'VERSION_SUNSET' }),
    );
  });

  it('answers the legacy mount with deprecation headers until 2027-04-12, then 410 GONE', () => {
    expect(make('2027-04-11T23:59:59Z').legacy()).toMatchObject({
      Deprecation: 'true',
      Sunset: 'Mon, 12 Apr 2027 00:00:00 GMT',
    });
    expect(() => make('2027-04-12T00:00:00Z').legacy()).toThrow(
      expect.objectContaining({ status: 410, code: 'GONE' }),
    );
  });

  it('decodes percent-encoded unreserved characters in the path only, so hooks see the path the router matches', () => {
    expect(decodeUnreservedInPath('/%61pi/v1/auth/%6C%6Fgin?next=%61%2F')).toBe(
      '/api/v1/auth/login?next=%61%2F',
    );
    expect(decodeUnreservedInPath('/api/v1/a%2Fb%20c%7E%5F')).toBe('/api/v1/a%2Fb%20c~_');
    expect(decodeUnreservedInPath('/api/v1/%zz')).toBe('/api/v1/%zz');
    expect(rewriteLegacyUrl({ url: '/%61pi/v1/traces' })).toBe('/api/v1/traces');
    const legacy: { url: string; svcLegacy?: boolean } = { url: '/%61pi/agents' };
    expect(rewriteLegacyUrl(legacy)).toBe('/api/v1/agents');
    expect(legacy.svcLegacy).toBe(true);
  });
});
