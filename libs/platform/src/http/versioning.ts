import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';
import { decodeUnreservedInPath } from '../logging/url-redaction.js';
import { AppError, ErrorCode } from './app-error.js';

export interface SchemaLimits {
  inputContext: {
    maxPromptLength: number;
    maxSystemPromptLength: number;
    maxContextBytes: number;
    maxConversationIdLength: number;
  };
  outputDecision: {
    maxActionObjectBytes: number;
    maxRationaleLength: number;
    maxAlternatives: number;
    maxToolCalls: number;
  };
}

export interface SchemaVersion {
  version: string;
  status: 'current' | 'deprecated';
  recommended: boolean;
  /** ISO date (YYYY-MM-DD); from 00:00 UTC that day the version answers 410 VERSION_SUNSET. */
  sunset: string | null;
  limits: SchemaLimits;
}

/**
 * The schema-version registry: exactly one version today (docs/dashboard-developers.md, "API conventions";
 * test/versioning.e2e-spec.ts).
 */
export const SCHEMA_VERSIONS: readonly SchemaVersion[] = [
  {
    version: '2026-04-11',
    status: 'current',
    recommended: true,
    sunset: null,
    limits: {
      inputContext: {
        maxPromptLength: 50_000,
        maxSystemPromptLength: 50_000,
        maxContextBytes: 100 * 1024,
        maxConversationIdLength: 256,
      },
      outputDecision: {
        maxActionObjectBytes: 10 * 1024,
        maxRationaleLength: 50_000,
        maxAlternatives: 10,
        maxToolCalls: 50,
      },
    },
  },
];

/** Injection token for the registry, so that tests can add a deprecated version and move the clock past it. */
export const VERSION_REGISTRY = Symbol('VERSION_REGISTRY');

/**
 * The unversioned `/api/<resource>` mount stops answering at this instant (docs/dashboard-developers.md,
 * "API conventions"; test/versioning.e2e-spec.ts).
 */
export const LEGACY_SUNSET = new Date('2027-04-12T00:00:00.000Z');
export const MIGRATION_GUIDE_PATH = '/docs/migrations/unversioned-to-v1';
export const API_PREFIX = 'api/v1';

const VERSION_FORMAT = /^\d{4}-\d{2}-\d{2}$/;

export interface AppliedVersion {
  version: SchemaVersion;
  headers: Record<string, string>;
}

@Injectable()
export class VersioningService {
  private readonly latest: SchemaVersion;

  constructor(
    @Inject(VERSION_REGISTRY) private readonly registry: readonly SchemaVersion[],
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    const sorted = [...registry].sort((a, b) => b.version.localeCompare(a.version));
    this.latest = sorted.find((v) => v.status === 'current') ?? sorted[0]!;
  }

  list(): readonly SchemaVersion[] {
    return this.registry;
  }

  get migrationGuideUrl(): string {
    return this.config.publicUrl + MIGRATION_GUIDE_PATH;
  }

  get deprecationLink(): string {
    return `<${this.migrationGuideUrl}>; rel="deprecation"`;
  }

  /**
   * Resolves `X-Svc-Version`. No header: the latest version. An exactly requested version is never replaced
   * by another: unknown or malformed → 400 VERSION_UNSUPPORTED, past its sunset → 410 VERSION_SUNSET.
   */
  resolve(requested: string | string[] | undefined): AppliedVersion {
    // Only an absent header selects the latest version: an empty one is malformed, like any other bad value.
    if (requested === undefined) return { version: this.latest, headers: {} };
    const value = Array.isArray(requested) ? requested.join(',') : requested.trim();
    const found = VERSION_FORMAT.test(value) ? this.registry.find((v) => v.version === value) : undefined;
    if (!found) {
      const supported = this.registry.map((v) => v.version);
      throw new AppError(
        400,
        ErrorCode.VERSION_UNSUPPORTED,
        `Unsupported X-Svc-Version "${value.slice(0, 40)}"; supported versions: ${supported.join(', ')}`,
        { extra: { supportedVersions: supported } },
      );
    }
    if (found.sunset) {
      const sunset = new Date(`${found.sunset}T00:00:00.000Z`);
      if (this.clock.nowMs() >= sunset.getTime()) {
        throw new AppError(
          410,
          ErrorCode.VERSION_SUNSET,
          `Schema version ${found.version} was sunset on ${found.sunset}`,
          {
            headers: { Link: this.deprecationLink },
          },
        );
      }
      return {
        version: found,
        headers: { Deprecation: 'true', Sunset: sunset.toUTCString(), Link: this.deprecationLink },
      };
    }
    if (found.status === 'deprecated') {
      return { version: found, headers: { Deprecation: 'true', Link: this.deprecationLink } };
    }
    return { version: found, headers: {} };
  }

  /** Headers for the legacy mount, or the 410 that replaces it after the sunset. */
  legacy(): Record<string, string> {
    if (this.clock.nowMs() >= LEGACY_SUNSET.getTime()) {
      throw new AppError(
        410,
        ErrorCode.GONE,
        `Unversioned /api routes were retired on ${LEGACY_SUNSET.toISOString().slice(0, 10)}; use /api/v1`,
        { headers: { Link: this.deprecationLink } },
      );
    }
    return { Deprecation: 'true', Sunset: LEGACY_SUNSET.toUTCString(), Link: this.deprecationLink };
  }
}

/**
 * Fastify's rewriteUrl: `/api/<resource>` (the legacy mount) is served by the same handlers as
 * `/api/v1/<resource>`; `/health`, `/health/live` and `/health/ready` at the root are the same handlers as under
 * `/api/v1` for load balancers and probes.
 */
const ROOT_HEALTH = /^\/health(?:\/live|\/ready)?(?:\?|$)/;

export function rewriteLegacyUrl(req: { url?: string; svcLegacy?: boolean }): string {
  const url = decodeUnreservedInPath(req.url ?? '/');
  if (ROOT_HEALTH.test(url)) return '/api/v1' + url;
  if (!url.startsWith('/api/') && url !== '/api') return url;
  const rest = url.slice(4); // after "/api"
  if (/^\/v\d+(\/|\?|$)/.test(rest)) return url;
  req.svcLegacy = true;
  return '/api/v1' + rest;
}

// Defined beside the URL redaction, which the tracing entry loads before the application; exported here as before.
export { decodeUnreservedInPath };
