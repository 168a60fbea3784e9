import { Inject, Injectable } from '@nestjs/common';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  type AuditEntryRow,
  AppError,
  AuditLog,
  Clock,
  ErrorCode,
  newId,
  newUnguessableId,
  PLAN_FEATURES,
  type RequestMeta,
  SignInMetrics,
  TransactionHost,
} from '#platform';
import { toOrganizationResponse } from '../organizations/dto/organization.dto.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { organizationDeleted } from '../organizations/organizations.errors.js';
import { type SamlSessionRef, SessionService } from '../sessions/session.service.js';
import { toUserResponse } from '../users/user.mapper.js';
import { UsersRepository } from '../users/users.repository.js';
import type {
  LoginDto,
  LoginResultDto,
  MeDto,
  MessageDto,
  MfaChallengeDto,
  RegisterDto,
  RegisterResultDto,
} from './dto/auth.dto.js';
import { hashPassword, verifyPassword } from './password.js';
import type { MembershipRow, OrganizationRow } from '../organizations/organization.schema.js';
import type { EmailProof, UserRow } from '../users/user.schema.js';
import { LoginEventsRepository } from '../sessions/login-events.repository.js';
import { TokenService } from '../sessions/token.service.js';
import { SsoEnforcement } from './sso-enforcement.js';

/** Purpose claim and lifetime of the tempToken that bridges password (or SSO) and the MFA code. */
export const MFA_PURPOSE = 'mfa';
export const MFA_TEMP_TOKEN_TTL_SECONDS = 300;

@Injectable()
export class AuthService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tx: TransactionHost,
    private readonly users: UsersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly sessions: SessionService,
    private readonly tokens: TokenService,
    private readonly loginEvents: LoginEventsRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly enforcement: SsoEnforcement,
    private readonly signIns: SignInMetrics,
  ) {}

  /** Creates the user, an organization on the default plan, the owner membership and the first session at once. */
  async register(dto: RegisterDto, meta: RequestMeta): Promise<RegisterResultDto> {
    const passwordHash = await hashPassword(dto.password);
    return this.createAccount({ ...dto, passwordHash }, 'password', meta);
  }

  /**
   * The account-creating part of sign-up, shared by the one-call registration and the e-mail-verified
   * sign-up. 409 EMAIL_IN_USE when the address is taken, even by a concurrent request.
   */
  createAccount(
    input: { name: string; email: string; passwordHash: string; organizationName: string },
    method: 'password' | 'email_verification',
    meta: RequestMeta,
  ): Promise<RegisterResultDto> {
    return this.tx.run(async () => {
      const { user, organization, entry } = await this.insertAccount(
        { ...input, ...(method === 'email_verification' ? { emailProof: 'signup' as const } : {}) },
        { method },
        meta,
      );
      const session = await this.sessions.open({
        sessionId: entry.id,
        userId: user.id,
        organizationId: organization.id,
        role: 'owner',
        timeout: user.sessionTimeout,
        meta,
      });
      return {
        token: session.token,
        user: toUserResponse(user),
        organization: toOrganizationResponse(organization),
      };
    });
  }

  /**
   * A new user, their organization (on the default plan) and their owner membership, and `auth.register`, in the
   * current transaction (or one of its own). 409 EMAIL_IN_USE when the address is taken, even concurrently. No
   * password for an account made by social login.
   */
  insertAccount(
    input: {
      name: string;
      email: string;
      passwordHash: string | null;
      organizationName: string;
      /** The identity at the provider that created the account (`microsoft:<sub>`), if any. */
      ssoId?: string;
      /** How the address was proven, when it was (an e-mailed sign-up token, a provider's verified address). */
      emailProof?: EmailProof;
    },
    metadata: Record<string, unknown>,
    meta: RequestMeta,
  ): Promise<{ user: UserRow; organization: OrganizationRow; entry: AuditEntryRow }> {
    return this.tx.run(async () => {
      const now = this.clock.now();
      const user = await this.users.insertIfEmailFree({
        id: newId(now.getTime()),
        email: input.email,
        name: input.name,
        passwordHash: input.passwordHash,
        passwordChangedAt: input.passwordHash ? now : null,
        ssoId: input.ssoId ?? null,
        emailVerifiedAt: input.emailProof ? now : null,
        emailVerifiedVia: input.emailProof ?? null,
        createdAt: now,
        updatedAt: now,
      });
      if (!user)
        throw AppError.conflict('An account with this e-mail address already exists', ErrorCode.EMAIL_IN_USE);
      const organization = await this.organizations.insert({
        // Organization ids are named in public URLs (SAML metadata): not walkable from one another.
        id: newUnguessableId(now.getTime()),
        name: input.organizationName,
        plan: this.config.defaultPlan,
        createdAt: now,
        updatedAt: now,
      });
      await this.organizations.insertMembership({
        id: newId(now.getTime()),
        organizationId: organization.id,
        userId: user.id,
        role: 'owner',
        isActive: true,
        createdAt: now,
        updatedAt: now,
      });
      const entry = await this.audit.record(
        { organizationId: organization.id, actor: { type: 'user', id: user.id, email: user.email } },
        'auth.register',
        { type: 'user', id: user.id },
        { ...metadata, organizationName: organization.name },
        meta,
      );
      return { user, organization, entry };
    });
  }

  /**
   * Password login. A wrong e-mail and a wrong password give the same 401 body after the same argon2 work.
   * A user with MFA gets a 5-minute purpose-bound tempToken instead of a session (finished by mfa/login).
   */
  login(dto: LoginDto, meta: RequestMeta): Promise<LoginResultDto | MfaChallengeDto> {
    return this.signIns.attempt('password', this.passwordLogin(dto, meta));
  }

  private async passwordLogin(dto: LoginDto, meta: RequestMeta): Promise<LoginResultDto | MfaChallengeDto> {
    const user = await this.users.findByEmail(dto.email);
    const valid = await verifyPassword(user?.passwordHash, dto.password);
    if (!user || !valid) {
      if (user) await this.recordFailure(user, 'password', 'invalid_password', meta);
      throw AppError.unauthorized('Invalid e-mail or password', ErrorCode.INVALID_CREDENTIALS);
    }
    const { membership, breakGlass } = await this.signInMembership(user, 'password', meta);
    if (user.mfaEnabled) {
      return this.mfaChallenge(user.id, membership.organizationId, 'password', undefined, undefined, breakGlass);
    }
    return this.completeLogin(user, membership, 'password', meta);
  }

  /**
   * The membership a sign-in that did not come through an IdP (password, magic link, social login) opens: the
   * oldest active one whose organization does not enforce its SSO for the user's address. When the
   * only ones left do, the answer is 403 SSO_REQUIRED, recorded in that organization, except for an owner with TOTP
   * signing in by password: that is the break-glass path, and its MFA step says so (`breakGlass`).
   * See docs/identity-administrators.md, "Enforcing single sign-on"; test/sso-enforce.e2e-spec.ts.
   */
  async signInMembership(
    user: UserRow,
    method: string,
    meta: RequestMeta,
  ): Promise<{ membership: MembershipRow; breakGlass: boolean }> {
    const first = await this.activeMembership(user, method, meta);
    const enforcing = await this.enforcement.enforcingOrganization(user.email);
    if (!enforcing || first.organizationId !== enforcing) return { membership: first, breakGlass: false };
    const active = (await this.organizations.membershipsOf(user.id)).filter((m) => m.isActive);
    const elsewhere = active.find((m) => m.organizationId !== enforcing);
    if (elsewhere) return { membership: elsewhere, breakGlass: false };
    if (method === 'password' && first.role === 'owner' && user.mfaEnabled) {
      return { membership: first, breakGlass: true };
    }
    await this.recordFailure(user, method, 'sso_required', meta, enforcing);
    throw this.enforcement.refusal();
  }

  /** The tempToken of a login that still needs its TOTP or backup code. */
  mfaChallenge(
    userId: string,
    organizationId: string,
    method: string,
    provider?: string,
    saml?: SamlSessionRef,
    breakGlass = false,
  ): MfaChallengeDto {
    return {
      mfaRequired: true,
      tempToken: this.tokens.mintPurpose(MFA_PURPOSE, userId, MFA_TEMP_TOKEN_TTL_SECONDS, {
        organizationId,
        method,
        ...(provider ? { provider } : {}),
        ...(saml ? { saml } : {}),
        ...(breakGlass ? { breakGlass: true } : {}),
      }),
    };
  }

  /**
   * The user's oldest active membership in an organization that is not deleted, or 401 ACCOUNT_DEACTIVATED
   * (recorded as a failed login) when the account or every membership is suspended, or 401 ORGANIZATION_DELETED
   * when every active membership is in a deleted organization.
   */
  async activeMembership(user: UserRow, method: string, meta: RequestMeta): Promise<MembershipRow> {
    const membership = user.isActive
      ? (await this.organizations.membershipsOf(user.id)).find((m) => m.isActive)
      : undefined;
    if (!membership) {
      if (user.isActive && (await this.organizations.hasActiveMembershipInDeleted(user.id))) {
        await this.recordFailure(user, method, 'organization_deleted', meta);
        throw organizationDeleted();
      }
      await this.recordFailure(user, method, 'deactivated', meta);
      throw AppError.unauthorized('This account is deactivated', ErrorCode.ACCOUNT_DEACTIVATED);
    }
    return membership;
  }

  /**
   * Opens a session after every factor has been checked (password, magic link, MFA, SSO): one audit entry
   * `auth.login` whose id names the session, the session row, a login event and the user's last-login fields.
   */
  completeLogin(
    user: UserRow,
    membership: Pick<MembershipRow, 'organizationId' | 'role'>,
    method: string,
    meta: RequestMeta,
    metadata: Record<string, unknown> = {},
    saml?: SamlSessionRef,
  ): Promise<LoginResultDto> {
    return this.tx.run(async () => {
      // The user row first, then the audit chain: every path that writes both takes them in this order, so
      // a login and a concurrent profile change cannot deadlock.
      const now = this.clock.now();
      await this.users.recordLogin(user.id, meta.ip, now);
      await this.organizations.recordMembershipLogin(membership.organizationId, user.id, meta.ip, now);
      const entry = await this.audit.record(
        {
          organizationId: membership.organizationId,
          actor: { type: 'user', id: user.id, email: user.email },
        },
        'auth.login',
        { type: 'user', id: user.id },
        { ...metadata, method },
        meta,
      );
      const session = await this.sessions.open({
        sessionId: entry.id,
        userId: user.id,
        organizationId: membership.organizationId,
        role: membership.role,
        timeout: user.sessionTimeout,
        meta,
        ssoPinned: method === 'sso',
        saml,
      });
      await this.loginEvents.record({
        userId: user.id,
        organizationId: membership.organizationId,
        method,
        success: true,
        meta,
      });
      return { token: session.token, user: toUserResponse(user) };
    });
  }

  /**
   * A magic link or a provider's verified address signs in the holder of the mailbox. On an account whose address
   * was never proven that is its first proof, which claims it (`UsersRepository.claimUnproven`): the password,
   * social link and IdP ownership its maker may have left go, and every session of it is revoked, before the
   * holder's own session opens. A proven account is returned as it is.
   */
  async claimByMailbox(user: UserRow, via: 'magic_link' | 'oauth'): Promise<UserRow> {
    if (user.emailVerifiedAt) return user;
    return this.tx.run(async () => {
      const claimed = await this.users.claimUnproven(user.id, { via }, this.clock.now());
      if (!claimed) return (await this.users.findById(user.id)) ?? user;
      await this.sessions.revokeAllForUser(user.id);
      return claimed;
    });
  }

  membershipsOf(userId: string): Promise<MembershipRow[]> {
    return this.organizations.membershipsOf(userId);
  }

  /**
   * A failed login on a known account: a login event of the account, and `auth.login_failed` in the organization
   * the attempt was aimed at, when it is known (an MFA step, an SSO callback) and the user is a member there. An
   * attempt that named no organization (a wrong password) is the account's alone: no organization's audit log
   * learns of it.
   */
  async recordFailure(
    user: UserRow,
    method: string,
    reason: string,
    meta: RequestMeta,
    organizationId: string | null = null,
  ): Promise<void> {
    await this.tx.run(async () => {
      const member = organizationId
        ? await this.organizations.membership(organizationId, user.id)
        : undefined;
      await this.loginEvents.record({
        userId: user.id,
        organizationId: member ? organizationId : null,
        method,
        success: false,
        reason,
        meta,
      });
      if (member) {
        await this.audit.record(
          { organizationId: member.organizationId, actor: { type: 'user', id: user.id, email: user.email } },
          'auth.login_failed',
          { type: 'user', id: user.id },
          { method, reason },
          meta,
        );
      }
    });
  }

  async logout(actor: Actor, meta: RequestMeta): Promise<MessageDto> {
    await this.tx.run(async () => {
      await this.sessions.revokeCurrent(actor);
      await this.audit.record(
        {
          organizationId: actor.organizationId,
          actor: { type: 'user', id: actor.userId, email: actor.email },
        },
        'auth.logout',
        { type: 'user', id: actor.userId },
        undefined,
        meta,
      );
    });
    return { message: 'Logged out' };
  }

  async me(actor: Actor): Promise<MeDto> {
    const [user, organization] = await Promise.all([
      this.users.findById(actor.userId!),
      this.organizations.findById(actor.organizationId),
    ]);
    if (!user || !organization) throw AppError.unauthorized();
    return {
      user: toUserResponse(user),
      organization: {
        id: organization.id,
        name: organization.name,
        plan: organization.plan,
        features: [...PLAN_FEATURES[organization.plan]],
      },
      role: actor.role!,
    };
  }
}
