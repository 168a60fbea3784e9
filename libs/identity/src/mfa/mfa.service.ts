import { Injectable } from '@nestjs/common';
import QRCode from 'qrcode';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  ErrorCode,
  type RequestMeta,
  SecretBox,
  SignInMetrics,
  TransactionHost,
} from '#platform';
import { AuthService, MFA_PURPOSE } from '../auth/auth.service.js';
import { SsoEnforcement } from '../auth/sso-enforcement.js';
import type { LoginResultDto, MessageDto } from '../auth/dto/auth.dto.js';
import type { MembershipRow } from '../organizations/organization.schema.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { LoginEventsRepository } from '../sessions/login-events.repository.js';
import { TokenService } from '../sessions/token.service.js';
import type { SamlSessionRef } from '../sessions/session.service.js';
import type { UserRow } from '../users/user.schema.js';
import { UsersRepository } from '../users/users.repository.js';
import { hashBackupCode, newBackupCodes } from './backup-codes.js';
import {
  type BackupCodesDto,
  type MfaCodeDto,
  type MfaCodeOrBackupCodeDto,
  type MfaLoginDto,
  type MfaResendDto,
  type MfaSetupDto,
  type SecuritySettingsDto,
  toSecuritySettingsResponse,
} from './dto/mfa.dto.js';
import { MfaBackupCodesRepository } from './mfa-backup-codes.repository.js';
import {
  invalidMfaCode,
  invalidTempToken,
  mfaAlreadyEnabled,
  mfaNotEnabled,
  mfaSetupNotStarted,
} from './mfa.errors.js';
import { isTotpCode, matchTotpStep, newTotpSecret, totpUri } from './totp.js';

/** How a second factor was proven; recorded in audit metadata (never the code itself). */
export type MfaFactor = 'totp' | 'backup_code';

/** Wrong second-factor codes allowed per user in the window before further attempts are refused. */
export const MFA_MAX_FAILURES = 10;
export const MFA_FAILURE_WINDOW_MS = 15 * 60 * 1000;

const QR_OPTIONS = { errorCorrectionLevel: 'M', margin: 2, width: 256 } as const;

/**
 * TOTP multi-factor authentication. Codes are checked against the injectable clock with one step of drift
 * either side; an accepted step is stored with a conditional update so that a code works once, and backup
 * codes are consumed the same way. Codes are never logged or written to the audit log.
 */
@Injectable()
export class MfaService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly backupCodes: MfaBackupCodesRepository,
    private readonly auth: AuthService,
    private readonly tokens: TokenService,
    private readonly loginEvents: LoginEventsRepository,
    private readonly audit: AuditLog,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly enforcement: SsoEnforcement,
    private readonly signIns: SignInMetrics,
  ) {}

  /** A new pending secret (replacing any earlier pending one); MFA stays off until enable proves a code. */
  async setup(actor: Actor): Promise<MfaSetupDto> {
    const user = await this.currentUser(actor);
    if (user.mfaEnabled) throw mfaAlreadyEnabled();
    const secret = newTotpSecret();
    const otpauthUrl = totpUri(secret, user.email);
    const qrCode = await QRCode.toDataURL(otpauthUrl, QR_OPTIONS);
    const stored = await this.users.setPendingMfaSecret(user.id, this.box.seal(secret), this.clock.now());
    if (!stored) throw mfaAlreadyEnabled();
    return { secret, otpauthUrl, qrCode };
  }

  /** Proves the first code against the pending secret, switches MFA on and issues the first backup codes. */
  async enable(actor: Actor, dto: MfaCodeDto, meta: RequestMeta): Promise<BackupCodesDto> {
    const user = await this.currentUser(actor);
    if (user.mfaEnabled) throw mfaAlreadyEnabled();
    const sealed = user.mfaSecretEncrypted;
    if (!sealed) throw mfaSetupNotStarted();
    const step = await matchTotpStep(this.box.open(sealed), compact(dto.code), this.clock.nowMs());
    if (step === undefined) throw invalidMfaCode();
    const codes = newBackupCodes();
    return this.tx.run(async () => {
      const now = this.clock.now();
      if (!(await this.users.enableMfa(user.id, sealed, step, now))) {
        // Lost a race: enabled by a concurrent request, or setup replaced the secret the code was checked with.
        throw (await this.users.findById(user.id))?.mfaEnabled ? mfaAlreadyEnabled() : invalidMfaCode();
      }
      await this.backupCodes.replaceAll(user.id, codes.map(hashOf), now);
      await this.audit.record(
        actor,
        'auth.mfa_enabled',
        { type: 'user', id: user.id },
        { backupCodes: codes.length },
        meta,
      );
      return { backupCodes: codes };
    });
  }

  /** Switches MFA off after a TOTP or backup code; forgets the secret and every backup code. */
  async disable(actor: Actor, dto: MfaCodeOrBackupCodeDto, meta: RequestMeta): Promise<MessageDto> {
    const user = await this.currentUser(actor);
    if (!user.mfaEnabled) throw mfaNotEnabled();
    await this.assertAttemptsLeft(user.id);
    const disabled = await this.tx.run(async () => {
      const factor = await this.consumeFactor(user, dto.code, { allowBackupCode: true });
      if (!factor) return false;
      const now = this.clock.now();
      await this.users.disableMfa(user.id, now);
      await this.backupCodes.deleteAll(user.id);
      await this.audit.record(actor, 'auth.mfa_disabled', { type: 'user', id: user.id }, { factor }, meta);
      return true;
    });
    if (!disabled) await this.rejectCode(user.id, actor.organizationId, 'mfa_disable', meta);
    return { message: 'Multi-factor authentication is disabled' };
  }

  /** A new set of backup codes after a TOTP code; every earlier code, used or not, stops working. */
  async regenerateBackupCodes(actor: Actor, dto: MfaCodeDto, meta: RequestMeta): Promise<BackupCodesDto> {
    const user = await this.currentUser(actor);
    if (!user.mfaEnabled) throw mfaNotEnabled();
    await this.assertAttemptsLeft(user.id);
    const codes = newBackupCodes();
    const generated = await this.tx.run(async () => {
      if (!(await this.consumeFactor(user, dto.code, { allowBackupCode: false }))) return undefined;
      await this.backupCodes.replaceAll(user.id, codes.map(hashOf), this.clock.now());
      await this.audit.record(
        actor,
        'auth.backup_codes_generated',
        { type: 'user', id: user.id },
        { count: codes.length },
        meta,
      );
      return { backupCodes: codes };
    });
    if (!generated) return this.rejectCode(user.id, actor.organizationId, 'backup_codes', meta);
    return generated;
  }

  /**
   * A wrong code on an authenticated MFA route (disable, new backup codes): recorded like a failed login so that
   * it counts toward the per-user cap (a stolen session must not be able to guess its way to switching MFA off).
   */
  private async rejectCode(
    userId: string,
    organizationId: string,
    method: string,
    meta: RequestMeta,
  ): Promise<never> {
    await this.loginEvents.record({
      userId,
      organizationId,
      method,
      success: false,
      reason: 'invalid_mfa_code',
      meta,
    });
    this.signIns.wrongMfaCode();
    throw invalidMfaCode();
  }

  /**
   * The second step of a login: the tempToken from /auth/login (or the SSO hand-off) plus a TOTP or backup
   * code opens the session. A wrong code is recorded as a failed login (outside the transaction that failed).
   */
  login(dto: MfaLoginDto, meta: RequestMeta): Promise<LoginResultDto> {
    return this.signIns.attempt('mfa', this.secondStep(dto, meta));
  }

  private async secondStep(dto: MfaLoginDto, meta: RequestMeta): Promise<LoginResultDto> {
    const claims = this.tokens.verifyPurpose(dto.tempToken, MFA_PURPOSE);
    if (!claims || typeof claims.organizationId !== 'string') throw invalidTempToken();
    const method = typeof claims.method === 'string' ? claims.method : 'password';
    const user = await this.users.findById(claims.sub);
    if (!user || !user.mfaEnabled || issuedBeforePasswordChange(claims.iat, user)) throw invalidTempToken();
    const membership = await this.membershipFor(user, claims.organizationId, method, meta);
    const breakGlass = await this.breakGlassOf(user, membership, method, claims.breakGlass === true, meta);
    await this.assertAttemptsLeft(user.id);
    const result = await this.tx.run(async () => {
      const factor = await this.consumeFactor(user, dto.code, { allowBackupCode: true });
      if (!factor) return undefined;
      // SSO and social logins name their provider on auth.login, after the code as without it.
      const provider = typeof claims.provider === 'string' ? { provider: claims.provider } : {};
      const session = await this.auth.completeLogin(
        user,
        membership,
        method,
        meta,
        { ...provider, mfa: true, mfaFactor: factor, ...(breakGlass ? { breakGlass: true } : {}) },
        samlSessionOf(claims.saml),
      );
      if (breakGlass) await this.enforcement.recordBreakGlass(user, membership.organizationId, factor, meta);
      return session;
    });
    if (!result) {
      this.signIns.wrongMfaCode();
      await this.auth.recordFailure(user, method, 'invalid_mfa_code', meta, membership.organizationId);
      throw invalidMfaCode();
    }
    return result;
  }

  /**
   * Whether this second step finishes an owner's break-glass sign-in. A first factor other than SSO
   * opens no session in an organization that enforces its SSO for the address (it may have turned enforcement on
   * since the tempToken was minted), except the password login of an owner that `signInMembership` marked.
   * See docs/identity-administrators.md, "Enforcing single sign-on"; test/sso-enforce.e2e-spec.ts.
   */
  private async breakGlassOf(
    user: UserRow,
    membership: MembershipRow,
    method: string,
    marked: boolean,
    meta: RequestMeta,
  ): Promise<boolean> {
    if (method === 'sso') return false;
    const enforcing = await this.enforcement.enforcingOrganization(user.email);
    if (enforcing !== membership.organizationId) return false;
    if (marked && method === 'password' && membership.role === 'owner') return true;
    await this.auth.recordFailure(user, method, 'sso_required', meta, membership.organizationId);
    throw this.enforcement.refusal();
  }

  /**
   * At most MFA_MAX_FAILURES wrong second-factor codes per user in MFA_FAILURE_WINDOW_MS, whatever the client
   * address: a stolen password plus many addresses must not make six-digit codes guessable. Further attempts
   * get 429 RATE_LIMIT_EXCEEDED until the oldest counted failure leaves the window.
   */
  private async assertAttemptsLeft(userId: string): Promise<void> {
    const now = this.clock.nowMs();
    const { count, oldest } = await this.loginEvents.recentFailures(
      userId,
      'invalid_mfa_code',
      new Date(now - MFA_FAILURE_WINDOW_MS),
    );
    if (count < MFA_MAX_FAILURES) return;
    const retryAfter = Math.max(
      1,
      Math.ceil(((oldest?.getTime() ?? now) + MFA_FAILURE_WINDOW_MS - now) / 1000),
    );
    throw new AppError(
      429,
      ErrorCode.RATE_LIMIT_EXCEEDED,
      'Too many wrong MFA codes for this account; try again later',
      {
        headers: { 'Retry-After': String(retryAfter) },
      },
    );
  }

  resend(): MfaResendDto {
    return {
      available: false,
      message:
        'Codes are generated by your authenticator app every 30 seconds; nothing is sent. ' +
        'If you cannot use the app, sign in with one of your backup codes.',
    };
  }

  async securitySettings(actor: Actor): Promise<SecuritySettingsDto> {
    const user = await this.currentUser(actor);
    const remaining = user.mfaEnabled ? await this.backupCodes.countUnused(user.id) : 0;
    return toSecuritySettingsResponse(user, remaining, this.clock.now());
  }

  private async currentUser(actor: Actor): Promise<UserRow> {
    const user = actor.userId ? await this.users.findById(actor.userId) : undefined;
    if (!user) throw AppError.unauthorized();
    return user;
  }

  /**
   * Checks a code and marks it used in one step: a TOTP code records its step (refused if that step or a later
   * one was already accepted), a backup code is consumed. Undefined when the code does not pass.
   */
  private async consumeFactor(
    user: UserRow,
    input: string,
    options: { allowBackupCode: boolean },
  ): Promise<MfaFactor | undefined> {
    const code = compact(input);
    if (isTotpCode(code)) {
      if (!user.mfaSecretEncrypted) return undefined;
      const step = await matchTotpStep(this.box.open(user.mfaSecretEncrypted), code, this.clock.nowMs());
      if (step === undefined) return undefined;
      return (await this.users.acceptMfaStep(user.id, step)) ? 'totp' : undefined;
    }
    if (!options.allowBackupCode) return undefined;
    const hash = hashBackupCode(code);
    if (!hash) return undefined;
    return (await this.backupCodes.consume(user.id, hash, this.clock.now())) ? 'backup_code' : undefined;
  }

  /**
   * The membership the login was started for (the tempToken's organization), and no other: a tempToken belongs to
   * one membership. When that one is no longer active (suspended, deactivated, removed, its organization deleted)
   * the answer is 401 ACCOUNT_DEACTIVATED, recorded in that organization, never a session somewhere else.
   */
  private async membershipFor(
    user: UserRow,
    organizationId: string,
    method: string,
    meta: RequestMeta,
  ): Promise<MembershipRow> {
    const membership = user.isActive
      ? (await this.organizations.membershipsOf(user.id)).find((m) => m.organizationId === organizationId)
      : undefined;
    if (!membership?.isActive) {
      await this.auth.recordFailure(user, method, 'deactivated', meta, organizationId);
      throw AppError.unauthorized('This account is deactivated', ErrorCode.ACCOUNT_DEACTIVATED);
    }
    return membership;
  }
}

/** Authenticator apps show codes as "123 456"; spaces are not part of any code. */
function compact(code: string): string {
  return code.replace(/\s+/g, '');
}

function hashOf(code: string): string {
  const hash = hashBackupCode(code);
  if (!hash) throw new Error('Generated backup code does not normalise');
  return hash;
}

/** A tempToken minted before the last password change belongs to the old password: refused. */
function issuedBeforePasswordChange(iat: unknown, user: UserRow): boolean {
  if (!user.passwordChangedAt) return false;
  if (typeof iat !== 'number') return true;
  return iat < Math.floor(user.passwordChangedAt.getTime() / 1000);
}

/** The SAML session a tempToken carries (this service signed it), or undefined. */
function samlSessionOf(value: unknown): SamlSessionRef | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const { nameId, nameIdFormat, sessionIndex } = value as Record<string, unknown>;
  if (typeof nameId !== 'string') return undefined;
  return {
    nameId,
    nameIdFormat: typeof nameIdFormat === 'string' ? nameIdFormat : null,
    sessionIndex: typeof sessionIndex === 'string' ? sessionIndex : null,
  };
}
