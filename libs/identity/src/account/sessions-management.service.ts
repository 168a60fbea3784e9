import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AppError,
  auditActorOf,
  AuditLog,
  Clock,
  ErrorCode,
  type RequestMeta,
  TransactionHost,
} from '#platform';
import { SsoEnforcement } from '../auth/sso-enforcement.js';
import { toOrganizationResponse } from '../organizations/dto/organization.dto.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { SessionService } from '../sessions/session.service.js';
import { SessionsRepository } from '../sessions/sessions.repository.js';
import type { UserRow } from '../users/user.schema.js';
import { UsersRepository } from '../users/users.repository.js';
import {
  type RevokedCountDto,
  type SessionDto,
  type SessionTimeoutDto,
  type SessionTokenDto,
  toSessionResponse,
} from './dto/sessions.dto.js';
import type { SwitchOrgResultDto } from './dto/profile.dto.js';

/** GET /auth/sessions lists at most this many live sessions (newest first). */
export const SESSIONS_LIST_CAP = 100;

/** The caller's session: a JWT caller has a jti, a user id and an expiry (the access guard admits only JWTs here). */
function sessionOf(actor: Actor): { userId: string; jti: string; expiresAt: Date } {
  if (!actor.userId || !actor.jti || !actor.tokenExpiresAt) throw AppError.unauthorized();
  return { userId: actor.userId, jti: actor.jti, expiresAt: actor.tokenExpiresAt };
}

/**
 * The caller's sessions: refresh, revocation, listing, the lifetime of future tokens and switching organization.
 * Every write and its audit entry share one transaction; a new session's id is the id of the audit entry that
 * opened it.
 */
@Injectable()
export class SessionsManagementService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly sessions: SessionService,
    private readonly sessionsRepo: SessionsRepository,
    private readonly users: UsersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly enforcement: SsoEnforcement,
  ) {}

  /**
   * A new token for the same user and organization, with the user's current session timeout; the presented jti
   * is revoked in the same transaction. The revocation goes first and must be this call's own, so a token is
   * refreshed at most once even by concurrent requests (the loser gets 401 SESSION_REVOKED).
   */
  refresh(actor: Actor, meta: RequestMeta): Promise<SessionTokenDto> {
    const current = sessionOf(actor);
    // A SCIM-deactivated membership's session lives out its expiry, read-only, and is never renewed
    // (docs/identity-administrators.md, "SCIM provisioning"; test/deprovisioning.e2e-spec.ts).
    if (actor.deactivated) {
      return Promise.reject(
        AppError.unauthorized(
          'This membership was deactivated; the session cannot be renewed',
          ErrorCode.ACCOUNT_DEACTIVATED,
        ),
      );
    }
    return this.tx.run(async () => {
      const now = this.clock.now();
      const spent = await this.sessionsRepo.revokeOnce(current.jti, current.userId, current.expiresAt, now);
      if (!spent) throw AppError.unauthorized('This session has been revoked', ErrorCode.SESSION_REVOKED);
      const user = await this.requireUser(current.userId);
      const previous = await this.sessionsRepo.findByJti(current.jti);
      // Once the organization enforces its SSO for the address, a session it did not open is not renewed; an
      // owner's is (owners keep the break-glass path).
      if (!previous?.ssoPinned && actor.role !== 'owner') await this.assertNoSsoRequired(user, actor.organizationId);
      const entry = await this.audit.record(
        actor,
        'auth.token_refreshed',
        { type: 'session', id: previous?.id ?? null },
        { previousSessionId: previous?.id ?? null },
        meta,
      );
      const session = await this.sessions.open({
        sessionId: entry.id,
        userId: user.id,
        organizationId: actor.organizationId,
        role: actor.role!,
        timeout: user.sessionTimeout,
        meta,
        ssoPinned: previous?.ssoPinned ?? false,
        saml: previous?.samlNameId
          ? {
              nameId: previous.samlNameId,
              nameIdFormat: previous.samlNameIdFormat,
              sessionIndex: previous.samlSessionIndex,
            }
          : undefined,
      });
      return { token: session.token };
    });
  }

  /** Blacklists every live session of the caller, the current one included. */
  revokeAll(actor: Actor, meta: RequestMeta): Promise<RevokedCountDto> {
    const current = sessionOf(actor);
    return this.tx.run(async () => {
      // A session that an organization's SSO opened for an account it did not create reaches that organization's
      // sessions only (test/tenant-takeover-cross-org.e2e-spec.ts, "finding 5").
      const revoked = await this.sessions.revokeAllForUser(
        current.userId,
        actor.ssoScoped ? { organizationId: actor.organizationId } : {},
      );
      await this.audit.record(
        actor,
        'auth.session_revoked',
        { type: 'user', id: current.userId },
        { all: true, count: revoked },
        meta,
      );
      return { revoked };
    });
  }

  /**
   * Blacklists one session of the caller, named by its id. Another user's or an unknown id is 404. A session
   * that is already revoked or has expired is left as it is: `{revoked: 0}`, no audit entry.
   */
  revokeOne(actor: Actor, sessionId: string, meta: RequestMeta): Promise<RevokedCountDto> {
    const current = sessionOf(actor);
    return this.tx.run(async () => {
      const session = await this.sessionsRepo.findForUser(sessionId, current.userId);
      if (!session || (actor.ssoScoped && session.organizationId !== actor.organizationId)) {
        throw AppError.notFound('Session');
      }
      // Like revoke-sessions, only a live session counts: a revoked or expired one is left as it is.
      if (session.revokedAt || session.expiresAt <= this.clock.now()) return { revoked: 0 };
      if (!(await this.sessions.revokeSession(session))) return { revoked: 0 };
      await this.audit.record(
        actor,
        'auth.session_revoked',
        { type: 'session', id: session.id },
        { all: false, count: 1, current: session.jti === current.jti },
        meta,
      );
      return { revoked: 1 };
    });
  }

  async list(actor: Actor): Promise<SessionDto[]> {
    const current = sessionOf(actor);
    const rows = await this.sessionsRepo.listLiveForUser(
      current.userId,
      this.clock.now(),
      SESSIONS_LIST_CAP,
      actor.ssoScoped ? actor.organizationId : undefined,
    );
    return rows.map((row) => toSessionResponse(row, current.jti));
  }

  /** Sets the lifetime of tokens minted from now on; tokens already issued keep their expiry. */
  setSessionTimeout(actor: Actor, dto: SessionTimeoutDto, meta: RequestMeta): Promise<SessionTimeoutDto> {
    const current = sessionOf(actor);
    return this.tx.run(async () => {
      const user = await this.requireUser(current.userId, true);
      if (user.sessionTimeout === dto.sessionTimeout) return { sessionTimeout: user.sessionTimeout };
      await this.users.updateSelf(user.id, { sessionTimeout: dto.sessionTimeout }, this.clock.now());
      await this.audit.record(
        actor,
        'auth.session_timeout_changed',
        { type: 'user', id: user.id },
        { from: user.sessionTimeout, to: dto.sessionTimeout },
        meta,
      );
      return { sessionTimeout: dto.sessionTimeout };
    });
  }

  /**
   * A new session in another organization where the caller's membership is active (else 404, whether the
   * organization is unknown or not the caller's). The presented token stays valid. The audit entry goes to
   * the target organization's chain and does not name the organization left, which belongs to another tenant.
   */
  switchOrganization(actor: Actor, organizationId: string, meta: RequestMeta): Promise<SwitchOrgResultDto> {
    const current = sessionOf(actor);
    return this.tx.run(async () => {
      // An organization's IdP vouched for this user in that organization only: its session stays there (sign in
      // again, with the other organization's own rules, to work there).
      const currentSession = await this.sessionsRepo.findByJti(current.jti);
      if (currentSession?.ssoPinned && organizationId !== actor.organizationId) {
        throw AppError.forbidden(
          'A session signed in through an organization’s single sign-on stays in that organization; sign in again',
        );
      }
      const membership = await this.organizations.membership(organizationId, current.userId);
      const organization = membership?.isActive
        ? await this.organizations.findById(organizationId)
        : undefined;
      if (!membership || !organization || organization.deletedAt) throw AppError.notFound('Organization');
      const user = await this.requireUser(current.userId);
      // Into an organization that enforces its SSO for the address, only its own SSO session goes (and that one
      // is already there): 403 SSO_REQUIRED.
      if (organizationId !== actor.organizationId) await this.assertNoSsoRequired(user, organizationId);
      const entry = await this.audit.record(
        { organizationId, actor: auditActorOf(actor) },
        'auth.org_switched',
        { type: 'organization', id: organizationId },
        { role: membership.role },
        meta,
      );
      const session = await this.sessions.open({
        sessionId: entry.id,
        userId: user.id,
        organizationId,
        role: membership.role,
        timeout: user.sessionTimeout,
        meta,
        // A switch from an SSO session (into its own organization: any other is refused above) stays one; it must
        // not turn a session scoped by its IdP into one that reaches the whole account.
        ssoPinned: currentSession?.ssoPinned ?? false,
      });
      return {
        token: session.token,
        organization: toOrganizationResponse(organization),
        role: membership.role,
      };
    });
  }

  private async assertNoSsoRequired(user: UserRow, organizationId: string): Promise<void> {
    if ((await this.enforcement.enforcingOrganization(user.email)) === organizationId) {
      throw this.enforcement.refusal();
    }
  }

  private async requireUser(userId: string, forUpdate = false): Promise<UserRow> {
    const user = forUpdate ? await this.users.findByIdForUpdate(userId) : await this.users.findById(userId);
    if (!user) throw AppError.unauthorized();
    return user;
  }
}
