import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  Clock,
  MailService,
  type RequestMeta,
  SignInMetrics,
  TransactionHost,
} from '#platform';
import { SessionService } from '../sessions/session.service.js';
import { OneTimeTokenService } from '../tokens/one-time-token.service.js';
import { UsersRepository } from '../users/users.repository.js';
import { AuthMail } from './auth-mail.js';
import { AuthService } from './auth.service.js';
import type {
  LoginResultDto,
  MessageDto,
  MfaChallengeDto,
  RegisterDto,
  RegisterResultDto,
} from './dto/auth.dto.js';
import type { ChangePasswordDto, ResetPasswordDto } from './dto/email-flows.dto.js';
import { invalidToken } from './auth.errors.js';
import { hashPassword, verifyPassword } from './password.js';
import { SsoEnforcement } from './sso-enforcement.js';

const HOUR = 3600 * 1000;
export const SIGNUP_TOKEN_TTL_MS = 24 * HOUR;
export const RESET_TOKEN_TTL_MS = HOUR;
export const MAGIC_LINK_TTL_MS = 15 * 60 * 1000;
/** An account-wide audit entry is written to at most this many of the user's organizations. */
const ACCOUNT_AUDIT_ORGANIZATIONS_MAX = 50;

/**
 * Sign-up by e-mail, password reset and change, and magic links. Every token is random, single use, stored
 * hashed and sent only by e-mail. Requests that name an e-mail answer the same whether or not an account
 * exists; for those, the work that depends on the account runs after the response.
 */
@Injectable()
export class EmailFlowsService implements BeforeApplicationShutdown {
  private readonly logger = new Logger('EmailFlows');
  private readonly pending = new Set<Promise<void>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tx: TransactionHost,
    private readonly users: UsersRepository,
    private readonly tokens: OneTimeTokenService,
    private readonly mail: MailService,
    private readonly auth: AuthService,
    private readonly sessions: SessionService,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly enforcement: SsoEnforcement,
    private readonly signIns: SignInMetrics,
  ) {}

  async requestSignup(dto: RegisterDto): Promise<MessageDto> {
    const passwordHash = await hashPassword(dto.password);
    this.background('request-signup', async () => {
      const existing = await this.users.findByEmail(dto.email);
      await this.tx.run(async () => {
        if (existing) {
          await this.mail.send({
            to: dto.email,
            template: 'already-registered',
            ...AuthMail.alreadyRegistered(this.config.appUrl),
          });
          return;
        }
        const { token } = await this.tokens.issue({
          purpose: 'signup',
          ttlMs: SIGNUP_TOKEN_TTL_MS,
          email: dto.email,
          payload: { name: dto.name, email: dto.email, passwordHash, organizationName: dto.organizationName },
        });
        await this.mail.send({
          to: dto.email,
          template: 'verify-signup',
          ...AuthMail.verifySignup(this.config.appUrl, dto.name, token),
        });
      });
    });
    return { message: 'If the address can be used, a confirmation e-mail is on its way.' };
  }

  async completeSignup(token: string, meta: RequestMeta): Promise<RegisterResultDto> {
    return this.tx.run(async () => {
      const row = await this.tokens.consume('signup', token);
      const payload = row?.payload as {
        name: string;
        email: string;
        passwordHash: string;
        organizationName: string;
      } | null;
      if (!payload) throw invalidToken();
      return this.auth.createAccount(payload, 'email_verification', meta);
    });
  }

  /** 403 SSO_REQUIRED when the address's domain enforces SSO (by the domain alone); else 200 whatever the account. */
  async forgotPassword(email: string): Promise<MessageDto> {
    await this.enforcement.assertMailSignInAllowed(email);
    this.background('forgot-password', async () => {
      const user = await this.users.findByEmail(email);
      if (!user || !user.isActive) return;
      await this.tx.run(async () => {
        await this.tokens.revokeOutstanding(user.id, 'password_reset');
        const { token } = await this.tokens.issue({
          purpose: 'password_reset',
          ttlMs: RESET_TOKEN_TTL_MS,
          userId: user.id,
          email,
        });
        await this.mail.send({
          to: email,
          template: 'password-reset',
          ...AuthMail.passwordReset(this.config.appUrl, token),
        });
      });
    });
    return { message: 'If an account exists for this address, a reset link is on its way.' };
  }

  /** New password from a reset link; every session of the user is revoked. */
  async resetPassword(dto: ResetPasswordDto, meta: RequestMeta): Promise<MessageDto> {
    const passwordHash = await hashPassword(dto.password);
    await this.tx.run(async () => {
      const row = await this.tokens.consume('password_reset', dto.token);
      const user = row?.userId ? await this.users.findById(row.userId) : undefined;
      if (!user) throw invalidToken();
      // A link mailed before the organization turned enforcement on sets no password it would refuse.
      await this.enforcement.assertMailSignInAllowed(user.email);
      const now = this.clock.now();
      // The link proves the mailbox. On an account whose address was never proven it also cuts the social identity
      // its maker linked (a Microsoft tenant's address proved nothing); the TOTP stays (see claimUnproven).
      if (user.emailVerifiedAt) await this.users.updatePassword(user.id, passwordHash, now);
      else await this.users.claimUnproven(user.id, { via: 'password_reset', passwordHash }, now);
      const revoked = await this.sessions.revokeAllForUser(user.id);
      await this.auditForUser(user.id, user.email, 'auth.password_reset', { sessionsRevoked: revoked }, meta);
    });
    return { message: 'Your password has been reset. Sign in with the new password.' };
  }

  /** Current password required; every other session of the user is revoked, the caller's stays. */
  async changePassword(actor: Actor, dto: ChangePasswordDto, meta: RequestMeta): Promise<MessageDto> {
    const user = await this.users.findById(actor.userId!);
    if (!user || !(await verifyPassword(user.passwordHash, dto.currentPassword))) {
      throw AppError.validation('The current password is incorrect', [
        { field: 'currentPassword', message: 'currentPassword is incorrect' },
      ]);
    }
    if (await verifyPassword(user.passwordHash, dto.newPassword)) {
      throw AppError.validation('The new password must differ from the current one', [
        { field: 'newPassword', message: 'newPassword must differ from the current password' },
      ]);
    }
    const passwordHash = await hashPassword(dto.newPassword);
    await this.tx.run(async () => {
      await this.users.updatePassword(user.id, passwordHash, this.clock.now());
      const revoked = await this.sessions.revokeAllForUser(user.id, { exceptJti: actor.jti });
      await this.audit.record(
        actor,
        'auth.password_changed',
        { type: 'user', id: user.id },
        { sessionsRevoked: revoked },
        meta,
      );
    });
    return { message: 'Your password has been changed. Other sessions were signed out.' };
  }

  /** 403 SSO_REQUIRED when the address's domain enforces SSO (by the domain alone); else 200 whatever the account. */
  async requestMagicLink(email: string): Promise<MessageDto> {
    await this.enforcement.assertMailSignInAllowed(email);
    this.background('magic-link', async () => {
      const user = await this.users.findByEmail(email);
      if (!user || !user.isActive) return;
      await this.tx.run(async () => {
        const { token } = await this.tokens.issue({
          purpose: 'magic_link',
          ttlMs: MAGIC_LINK_TTL_MS,
          userId: user.id,
          email,
        });
        await this.mail.send({
          to: email,
          template: 'magic-link',
          ...AuthMail.magicLink(this.config.appUrl, token),
        });
      });
    });
    return { message: 'If an account exists for this address, a sign-in link is on its way.' };
  }

  /** A magic link is one factor: it logs in like a password, and a user with MFA still gets the MFA step. */
  verifyMagicLink(token: string, meta: RequestMeta): Promise<LoginResultDto | MfaChallengeDto> {
    // One transaction: if opening the session fails, the link is not spent.
    const signIn = this.tx.run(async () => {
      const row = await this.tokens.consume('magic_link', token);
      const found = row?.userId ? await this.users.findById(row.userId) : undefined;
      if (!found) throw invalidToken();
      // A link mailed before the organization turned enforcement on opens no session there (and claims nothing).
      const { membership } = await this.auth.signInMembership(found, 'magic_link', meta);
      const user = await this.auth.claimByMailbox(found, 'magic_link');
      if (user.mfaEnabled) return this.auth.mfaChallenge(user.id, membership.organizationId, 'magic_link');
      return this.auth.completeLogin(user, membership, 'magic_link', meta);
    });
    return this.signIns.attempt('magic_link', signIn);
  }

  /**
   * An account-wide event (a password reset revokes the account's sessions everywhere) goes to the audit log of
   * each organization where the user is an active member: each lost that member's sessions. No organization the
   * user merely belonged to, or picked by order, hears of it.
   */
  private async auditForUser(
    userId: string,
    email: string,
    eventType: string,
    metadata: Record<string, unknown>,
    meta: RequestMeta,
  ): Promise<void> {
    const memberships = (await this.auth.membershipsOf(userId)).filter((m) => m.isActive);
    for (const membership of memberships.slice(0, ACCOUNT_AUDIT_ORGANIZATIONS_MAX)) {
      await this.audit.record(
        { organizationId: membership.organizationId, actor: { type: 'user', id: userId, email } },
        eventType,
        { type: 'user', id: userId },
        metadata,
        meta,
      );
    }
  }

  /** Work that must not shape the response (its timing or outcome would reveal whether an account exists). */
  private background(name: string, work: () => Promise<void>): void {
    const running: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch((err: unknown) => this.logger.error({ err, flow: name }, 'Background e-mail flow failed'))
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }

  /** Shutdown waits for mail work already promised to a caller, before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
