import { createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import jwt from 'jsonwebtoken';
import { APP_CONFIG, type AppConfig, Clock, type Role } from '#platform';
import type { SessionTimeout } from '../users/session-timeout.js';

export const SESSION_TTL_SECONDS: Record<SessionTimeout, number> = {
  '1h': 3600,
  '8h': 8 * 3600,
  '24h': 24 * 3600,
  '7d': 7 * 24 * 3600,
};

/** Claims of an access token (docs/identity-administrators.md, "Identity, roles and plans"). */
export interface AccessClaims {
  _id: string;
  sub: string;
  organizationId: string;
  role: Role;
  jti: string;
  iat: number;
  exp: number;
}

export interface MintedToken {
  token: string;
  jti: string;
  issuedAt: Date;
  expiresAt: Date;
}

/** Signs and verifies HS256 access tokens against the injectable clock. */
@Injectable()
export class TokenService {
  // A KeyObject made once: given a string, jsonwebtoken tries to parse it as a public key on every call,
  // which throws internally and cost a sixth of the CPU of an authenticated request.
  private readonly key: KeyObject;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.key = createSecretKey(Buffer.from(config.jwtSecret, 'utf8'));
  }

  mintAccess(input: {
    userId: string;
    organizationId: string;
    role: Role;
    timeout: SessionTimeout;
  }): MintedToken {
    const iat = Math.floor(this.clock.nowMs() / 1000);
    const exp = iat + SESSION_TTL_SECONDS[input.timeout];
    const jti = randomBytes(16).toString('hex');
    const claims: AccessClaims = {
      _id: input.userId,
      sub: input.userId,
      organizationId: input.organizationId,
      role: input.role,
      jti,
      iat,
      exp,
    };
    const token = jwt.sign(claims, this.key, { algorithm: 'HS256' });
    return { token, jti, issuedAt: new Date(iat * 1000), expiresAt: new Date(exp * 1000) };
  }

  /**
   * Checks the signature and shape but not the expiry: a revoked token must answer SESSION_REVOKED even after
   * it expired, so the caller checks revocation first and expiry second.
   */
  verifyAccess(token: string): AccessClaims | undefined {
    let payload: unknown;
    try {
      payload = jwt.verify(token, this.key, { algorithms: ['HS256'], ignoreExpiration: true });
    } catch {
      return undefined;
    }
    const p = payload as Partial<AccessClaims> & { purpose?: unknown };
    if (
      typeof p !== 'object' ||
      p.purpose !== undefined ||
      typeof p._id !== 'string' ||
      typeof p.organizationId !== 'string' ||
      typeof p.jti !== 'string' ||
      typeof p.exp !== 'number'
    ) {
      return undefined;
    }
    return p as AccessClaims;
  }

  /**
   * A short-lived, purpose-bound token (the MFA step of a login: `purpose: "mfa"`, 5 minutes). Access-token
   * verification refuses anything with a purpose, so it can never be used as a session.
   */
  mintPurpose(
    purpose: string,
    userId: string,
    ttlSeconds: number,
    extra: Record<string, unknown> = {},
  ): string {
    const iat = Math.floor(this.clock.nowMs() / 1000);
    return jwt.sign({ ...extra, purpose, sub: userId, iat, exp: iat + ttlSeconds }, this.key, {
      algorithm: 'HS256',
    });
  }

  /** The claims of a purpose token that is valid now, or undefined. */
  verifyPurpose(token: string, purpose: string): (Record<string, unknown> & { sub: string }) | undefined {
    try {
      const payload = jwt.verify(token, this.key, {
        algorithms: ['HS256'],
        clockTimestamp: Math.floor(this.clock.nowMs() / 1000),
      }) as Record<string, unknown>;
      if (payload.purpose !== purpose || typeof payload.sub !== 'string') return undefined;
      return payload as Record<string, unknown> & { sub: string };
    } catch {
      return undefined;
    }
  }

  isExpired(claims: AccessClaims): boolean {
    return claims.exp * 1000 <= this.clock.nowMs();
  }
}
