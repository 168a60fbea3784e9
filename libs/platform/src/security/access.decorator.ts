import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import type { UserRateLimitName } from '../config/app-config.js';
import type { Credential } from './actor.js';
import type { Feature, Role } from './roles.js';

export const ACCESS_KEY = 'svc:access';

export interface AccessOptions {
  /** Credentials accepted on this route (default: JWT only). */
  via?: Credential[];
  /** Roles allowed (default: any role). Keys are checked by kind and scope instead. */
  roles?: readonly Role[];
  /** Plan feature required (403 UPGRADE_REQUIRED otherwise). */
  feature?: Feature;
  /** The route changes state: read-only workspace keys are refused. Defaults to true for non-GET methods. */
  write?: boolean;
  /**
   * A per-user limiter counted after every other check passed (429 RATE_LIMITED with Retry-After beyond it);
   * a key counts against the user who created it (under its own id when it has none).
   */
  rateLimit?: UserRateLimitName;
  /**
   * The route changes the account beyond the caller's organization (password, TOTP, profile, every session): a
   * session that an organization's SSO opened for an account it did not create is refused with 403
   * REAUTHENTICATION_REQUIRED.
   */
  accountWide?: boolean;
  /**
   * A write that a session whose membership SCIM deactivated may still make (logout; refresh, which answers 401
   * itself). Every other write of such a session is 403 ACCOUNT_DEACTIVATED.
   */
  allowDeactivated?: boolean;
  /** Credentials are optional: without any the route runs with no actor; any sent must be valid. */
  optional?: boolean;
}

export interface AccessMetadata extends AccessOptions {
  public: boolean;
}

/**
 * The one access decorator: sets what the global guard enforces and the OpenAPI security entry together.
 * Routes without it are refused (deny by default).
 */
export function Access(options: AccessOptions = {}): MethodDecorator & ClassDecorator {
  const via = options.via ?? ['jwt'];
  const meta: AccessMetadata = { ...options, via, public: false };
  const security = [];
  if (via.includes('jwt')) security.push(ApiBearerAuth('jwt'));
  if (via.includes('workspaceKey') || via.includes('agentKey')) security.push(ApiSecurity('apiKey'));
  // OpenAPI's way of saying "or none": an empty requirement beside the others.
  if (options.optional) security.push(ApiSecurity({}));
  return applyDecorators(SetMetadata(ACCESS_KEY, meta), ...security);
}

/** Public route: no credentials read or required. */
export function Public(): MethodDecorator & ClassDecorator {
  return SetMetadata(ACCESS_KEY, { public: true } satisfies AccessMetadata);
}

/** Shorthand for a JWT route limited to roles. */
export function Roles(...roles: Role[]): MethodDecorator & ClassDecorator {
  return Access({ roles });
}

/** Shorthand for a JWT route that needs a plan feature. */
export function RequiresFeature(feature: Feature, roles?: readonly Role[]): MethodDecorator & ClassDecorator {
  return Access({ feature, roles });
}
