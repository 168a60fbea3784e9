import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AppError,
  type BearerResolver,
  Clock,
  ErrorCode,
  type RequestMeta,
  type Role,
} from '#platform';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import type { SessionTimeout } from '../users/session-timeout.js';
import { AccessRevocations } from './access-revocations.js';
import { SessionsRepository } from './sessions.repository.js';
import { TokenService } from './token.service.js';

export interface OpenSessionInput {
  /** Id of the audit entry that opened the session; also the session id. */
  sessionId: string;
  userId: string;
  organizationId: string;
  role: Role;
  timeout: SessionTimeout;
  meta?: RequestMeta;
  /** Opened by SSO: the session may not switch organization (see `sessions.ssoPinned`). */
  ssoPinned?: boolean;
  /** Opened by SAML: what single logout names the session by. */
  saml?: SamlSessionRef;
}

/** A SAML sign-in's subject and session at the IdP, kept on the session for single logout. */
export interface SamlSessionRef {
  nameId: string;
  nameIdFormat: string | null;
  sessionIndex: string | null;
}

/** Sessions are minted JWTs: opening records the jti; the access guard resolves bearers through here. */
@Injectable()
export class SessionService implements BearerResolver {
  constructor(
    private readonly tokens: TokenService,
    private readonly sessions: SessionsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly revocations: AccessRevocations,
    private readonly clock: Clock,
  ) {}

  /** Mints a JWT and records its session; call inside the transaction that writes the opening audit entry. */
  async open(input: OpenSessionInput): Promise<{ token: string; expiresAt: Date }> {
    const minted = this.tokens.mintAccess(input);
    await this.sessions.insert({
      id: input.sessionId,
      jti: minted.jti,
      userId: input.userId,
      organizationId: input.organizationId,
      ip: input.meta?.ip ?? null,
      userAgent: input.meta?.userAgent ?? null,
      createdAt: minted.issuedAt,
      expiresAt: minted.expiresAt,
      revokedAt: null,
      ssoPinned: input.ssoPinned ?? false,
      samlNameId: input.saml?.nameId ?? null,
      samlNameIdFormat: input.saml?.nameIdFormat ?? null,
      samlSessionIndex: input.saml?.sessionIndex ?? null,
    });
    return { token: minted.token, expiresAt: minted.expiresAt };
  }

  /** Revokes the caller's session; the user's open streams in its organization close (call in a transaction). */
  async revokeCurrent(actor: Actor): Promise<void> {
    if (!actor.jti || !actor.userId || !actor.tokenExpiresAt) return;
    await this.sessions.revoke(actor.jti, actor.userId, actor.tokenExpiresAt, this.clock.now());
    await this.revocations.announce(actor.userId, actor.organizationId);
  }

  /**
   * Revokes every live session of the user (in one organization, when given), except `exceptJti` when given; the
   * user's open streams there close (call in a transaction).
   */
  async revokeAllForUser(
    userId: string,
    options: { exceptJti?: string; organizationId?: string } = {},
  ): Promise<number> {
    const revoked = await this.sessions.revokeAllForUser(
      userId,
      this.clock.now(),
      options.exceptJti,
      options.organizationId,
    );
    await this.revocations.announce(userId, options.organizationId ?? null);
    return revoked;
  }

  /** Revokes one session by its row (`revoke-session`); false when it was revoked already. */
  async revokeSession(session: { jti: string; userId: string; organizationId: string; expiresAt: Date }) {
    const done = await this.sessions.revokeOnce(
      session.jti,
      session.userId,
      session.expiresAt,
      this.clock.now(),
    );
    if (done) await this.revocations.announce(session.userId, session.organizationId);
    return done;
  }

  async resolveBearer(token: string): Promise<Actor> {
    const claims = this.tokens.verifyAccess(token);
    if (!claims) throw AppError.unauthorized('Invalid or malformed token');
    const principal = await this.organizations.sessionPrincipal(
      claims.jti,
      claims.organizationId,
      claims._id,
    );
    if (principal.revoked)
      throw AppError.unauthorized('This session has been revoked', ErrorCode.SESSION_REVOKED);
    if (this.tokens.isExpired(claims))
      throw AppError.unauthorized('This session has expired', ErrorCode.TOKEN_EXPIRED);
    if (!principal.userId || !principal.role || !principal.plan) {
      throw AppError.unauthorized('This session no longer has access to the organization');
    }
    if (!principal.userActive || !principal.membershipActive) {
      throw AppError.unauthorized('This account is deactivated', ErrorCode.ACCOUNT_DEACTIVATED);
    }
    return {
      type: 'user',
      credential: 'jwt',
      organizationId: claims.organizationId,
      plan: principal.plan,
      userId: principal.userId,
      email: principal.email,
      role: principal.role,
      jti: claims.jti,
      tokenExpiresAt: new Date(claims.exp * 1000),
      ...(principal.ssoScoped ? { ssoScoped: true } : {}),
      ...(principal.deactivatedByScim ? { deactivated: true } : {}),
    };
  }
}
