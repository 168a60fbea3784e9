import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  Clock,
  type DeletedDto,
  ErrorCode,
  isObjectId,
  MailService,
  newId,
  type Page,
  type PaginationQueryDto,
  pageRequest,
  type RequestMeta,
  type Role,
  SecretBox,
  sha256Hex,
  toPage,
  TransactionHost,
} from '#platform';
import { AuthService } from '../auth/auth.service.js';
import type { MfaChallengeDto } from '../auth/dto/auth.dto.js';
import { hashPassword, verifyPassword } from '../auth/password.js';
import { SsoEnforcement } from '../auth/sso-enforcement.js';
import { SessionService } from '../sessions/session.service.js';
import { OneTimeTokenService } from '../tokens/one-time-token.service.js';
import { toOrganizationResponse } from '../organizations/dto/organization.dto.js';
import type { OrganizationRow } from '../organizations/organization.schema.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import type { UserRow } from '../users/user.schema.js';
import { UsersRepository } from '../users/users.repository.js';
import {
  type AcceptedInvitationDto,
  type AcceptInvitationDto,
  type CreateInvitationDto,
  type InvitationDto,
  type InviteInvalidReason,
  type InviteValidationDto,
  toInvalidInviteResponse,
  toInvitationResponse,
  toValidInviteResponse,
} from './dto/invitation.dto.js';
import { type InvitationByToken, InvitationsRepository } from './invitations.repository.js';
import { alreadyMember, inviteAlreadyUsed, inviteExpired, onlyOwnerTouchesOwners } from './team.errors.js';
import { TeamMail } from './team-mail.js';
import { MembersRepository } from '../organizations/members.repository.js';

export const INVITE_TTL_MS = 7 * 24 * 3600 * 1000;
/** The pending-invite list is bounded: default 50 per page, at most 100. */
export const INVITE_LIST_PAGE = { limit: 50, max: 100 };
// Tokens are 43 characters (32 bytes, base64url); anything much longer is not looked up.
const TOKEN_MAX_LENGTH = 128;

/** A fresh invitation token: 32 random bytes, base64url. */
export function mintInviteToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Why a stored invitation does not admit its holder at `now`, or undefined when it does. */
export function inviteState(
  invite: Pick<InvitationByToken, 'status' | 'expiresAt' | 'organizationName'> | undefined,
  now: Date,
): InviteInvalidReason | undefined {
  if (!invite || invite.organizationName === null) return 'not_found';
  if (invite.status === 'revoked') return 'revoked';
  if (invite.status === 'accepted') return 'used';
  if (invite.expiresAt.getTime() <= now.getTime()) return 'expired';
  return undefined;
}

/**
 * The accept route's answer to each reason (docs/identity-administrators.md, "Teams"; test/invitations.e2e-spec.ts).
 */
function refusal(reason: InviteInvalidReason): AppError {
  switch (reason) {
    case 'used':
      return inviteAlreadyUsed();
    case 'expired':
      return inviteExpired();
    case 'revoked':
    case 'not_found':
      return AppError.notFound('Invitation');
  }
}

const ALREADY_MEMBER_MESSAGE = 'This e-mail address is already a member or has a pending invitation';

/**
 * Invitations: created and resent by owners and admins, the token mailed (never returned); validated and accepted
 * on public routes by whoever holds the token. The token is stored as SHA-256 for lookup and sealed with the secret
 * box, because a resend mails the same token again.
 */
@Injectable()
export class InvitationsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly invitations: InvitationsRepository,
    private readonly team: MembersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly users: UsersRepository,
    private readonly auth: AuthService,
    private readonly sessions: SessionService,
    private readonly oneTimeTokens: OneTimeTokenService,
    private readonly mail: MailService,
    private readonly box: SecretBox,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly enforcement: SsoEnforcement,
  ) {}

  create(actor: Actor, dto: CreateInvitationDto, meta: RequestMeta): Promise<InvitationDto> {
    const role: Role = dto.role ?? 'member';
    if (role === 'owner' && actor.role !== 'owner') return Promise.reject(onlyOwnerTouchesOwners());
    const token = mintInviteToken();
    return this.tx.run(async () => {
      const now = this.clock.now();
      // The lock serialises invitations per organization: there is no unique index on pending (org, e-mail).
      const organization = await this.lockOrganization(actor.organizationId);
      await this.assertInvitable(actor.organizationId, dto.email, now);
      const id = newId(now.getTime());
      const expiresAt = new Date(now.getTime() + INVITE_TTL_MS);
      await this.invitations.insert({
        id,
        organizationId: actor.organizationId,
        email: dto.email,
        role,
        tokenHash: sha256Hex(token),
        tokenEncrypted: this.box.seal(token),
        status: 'pending',
        invitedBy: actor.userId!,
        expiresAt,
        createdAt: now,
        updatedAt: now,
      });
      await this.sendInvitation(organization, actor.email, dto.email, role, token);
      await this.audit.record(
        actor,
        'team.invite.created',
        { type: 'invitation', id: id },
        { email: dto.email, role, expiresAt },
        meta,
      );
      return toInvitationResponse({
        id,
        email: dto.email,
        role,
        expiresAt,
        createdAt: now,
        invitedBy: { id: actor.userId!, email: actor.email },
      });
    });
  }

  async list(actor: Actor, query: PaginationQueryDto): Promise<Page<InvitationDto>> {
    const page = pageRequest(query, INVITE_LIST_PAGE);
    const { rows, total } = await this.invitations.listLive(actor.organizationId, this.clock.now(), page);
    return toPage(rows.map(toInvitationResponse), total, page);
  }

  /** Revokes a pending invitation (expired or not); a revoked or accepted one is 404. */
  revoke(actor: Actor, id: string, meta: RequestMeta): Promise<DeletedDto> {
    if (!isObjectId(id)) return Promise.reject(AppError.notFound('Invitation'));
    return this.tx.run(async () => {
      const row = await this.invitations.findPendingForUpdate(actor.organizationId, id);
      if (!row) throw AppError.notFound('Invitation');
      await this.invitations.revoke(actor.organizationId, id, this.clock.now());
      await this.audit.record(
        actor,
        'team.invite.revoked',
        { type: 'invitation', id: id },
        { email: row.email, role: row.role },
        meta,
      );
      return { id, deleted: true };
    });
  }

  /**
   * Mails the same token again and resets the expiry to 7 days from now. A pending invitation that has expired
   * can be resent, unless its e-mail has meanwhile become a member or received another invitation.
   */
  resend(actor: Actor, id: string, meta: RequestMeta): Promise<InvitationDto> {
    if (!isObjectId(id)) return Promise.reject(AppError.notFound('Invitation'));
    return this.tx.run(async () => {
      const now = this.clock.now();
      const organization = await this.lockOrganization(actor.organizationId);
      const row = await this.invitations.findPendingForUpdate(actor.organizationId, id);
      if (!row) throw AppError.notFound('Invitation');
      if (row.role === 'owner' && actor.role !== 'owner') throw onlyOwnerTouchesOwners();
      await this.assertInvitable(actor.organizationId, row.email, now, id);
      const expiresAt = new Date(now.getTime() + INVITE_TTL_MS);
      await this.invitations.renew(actor.organizationId, id, expiresAt, now);
      const view = (await this.invitations.findView(actor.organizationId, id))!;
      await this.sendInvitation(
        organization,
        view.invitedBy.email,
        row.email,
        row.role,
        this.box.open(row.tokenEncrypted),
      );
      await this.audit.record(
        actor,
        'team.invite.resent',
        { type: 'invitation', id: id },
        { email: row.email, role: row.role, expiresAt },
        meta,
      );
      return toInvitationResponse(view);
    });
  }

  async validate(token: string): Promise<InviteValidationDto> {
    const invite = await this.lookup(token);
    const reason = inviteState(invite, this.clock.now());
    if (reason || !invite) return toInvalidInviteResponse(reason ?? 'not_found');
    return toValidInviteResponse({
      organizationName: invite.organizationName!,
      role: invite.role,
      inviterEmail: invite.inviterEmail,
    });
  }

  /**
   * Accepts an invitation. The token proves only the mailbox, so who ends up signed in depends on the
   * account the address has:
   * - none: `{name, password}` create it, its address proven by the invitation;
   * - one whose address was proven: the caller must be signed in as it (JWT) or send its `password`, else 401;
   * - one whose address was never proven (a registration nobody confirmed, an IdP's or SCIM's say-so): the token
   *   is the proof, so `{name, password}` replace the account's credentials (its TOTP and social or SSO link go),
   *   and every session and outstanding token of it is revoked: whoever made the account loses it.
   * A password sent is never ignored: a wrong one is 401 INVALID_CREDENTIALS. Then the membership with the
   * invited role, and a session in the inviting organization (or its MFA step). The invitation is claimed by one
   * conditional update, so of two concurrent accepts exactly one succeeds.
   * See docs/identity-administrators.md, "Teams"; test/invitations.e2e-spec.ts, test/invitation-takeover-*.e2e-spec.ts.
   */
  async accept(
    token: string,
    dto: AcceptInvitationDto,
    caller: Actor | undefined,
    meta: RequestMeta,
  ): Promise<AcceptedInvitationDto | MfaChallengeDto> {
    const invite = await this.lookup(token);
    const reason = inviteState(invite, this.clock.now());
    if (reason || !invite) throw refusal(reason ?? 'not_found');
    const existing = await this.users.findByEmail(invite.email);
    if (existing && !existing.isActive) {
      throw AppError.unauthorized('This account is deactivated', ErrorCode.ACCOUNT_DEACTIVATED);
    }
    const kind: 'create' | 'claim' | 'join' = !existing
      ? 'create'
      : existing.emailVerifiedAt
        ? 'join'
        : 'claim';
    if (kind === 'join') await this.assertAccountHolder(existing!, dto, caller, meta);
    const passwordHash = kind === 'join' ? undefined : await hashPassword(this.newAccountPassword(dto, kind));
    // An organization that enforces its SSO for the address takes the member in, but opens no session that its
    // IdP did not: the answer is 403 SSO_REQUIRED once the membership is committed.
    const ssoOnly =
      (await this.enforcement.enforcingOrganization(invite.email)) === invite.organizationId;

    const accepted = await this.tx.run(async () => {
      const now = this.clock.now();
      const organization = await this.lockOrganization(invite.organizationId);
      // An existing account's row stays locked until commit: an erasure that would remove the account (its only
      // organization erased at this moment) waits, then sees the new membership and keeps it.
      if (existing && !(await this.users.findByIdForUpdate(existing.id))) {
        throw AppError.conflict('The account changed while the invitation was accepted; try again');
      }
      const userId = existing?.id ?? newId(now.getTime());
      if (!(await this.invitations.markAccepted(invite.id, userId, now))) {
        const current = await this.invitations.findByTokenHash(sha256Hex(token));
        throw refusal(inviteState(current, now) ?? 'used');
      }
      let user: UserRow;
      if (kind === 'create') {
        user = await this.createUser(userId, invite.email, dto.name!, passwordHash!, now);
      } else if (kind === 'claim') {
        user = await this.claim(existing!.id, dto.name!, passwordHash!, now);
      } else {
        user = existing!;
      }
      const membership = await this.team.insertIfAbsent({
        id: newId(now.getTime()),
        organizationId: organization.id,
        userId: user.id,
        role: invite.role,
        isActive: true,
        createdAt: now,
        updatedAt: now,
      });
      if (!membership) throw alreadyMember('This account is already a member of the organization');
      await this.audit.record(
        { organizationId: organization.id, actor: { type: 'user', id: user.id, email: user.email } },
        'team.invite.accepted',
        { type: 'invitation', id: invite.id },
        { email: invite.email, role: invite.role, newUser: kind === 'create', claimed: kind === 'claim' },
        meta,
      );
      if (ssoOnly) return undefined;
      if (user.mfaEnabled) return this.auth.mfaChallenge(user.id, organization.id, 'invite');
      const session = await this.auth.completeLogin(user, membership, 'invite', meta);
      return { ...session, organization: toOrganizationResponse(organization), role: membership.role };
    });
    if (!accepted) {
      throw this.enforcement.refusal(
        'You joined the organization; it requires single sign-on for this address, so sign in through your ' +
          'identity provider',
      );
    }
    return accepted;
  }

  private async lookup(token: string): Promise<InvitationByToken | undefined> {
    if (typeof token !== 'string' || token.length === 0 || token.length > TOKEN_MAX_LENGTH) return undefined;
    return this.invitations.findByTokenHash(sha256Hex(token));
  }

  private async lockOrganization(organizationId: string): Promise<OrganizationRow> {
    const organization = await this.organizations.findByIdForUpdate(organizationId);
    if (!organization || organization.deletedAt) throw AppError.notFound('Organization');
    return organization;
  }

  /** 400 ALREADY_MEMBER when the e-mail is a member, or has a live invitation other than `exceptId`. */
  private async assertInvitable(
    organizationId: string,
    email: string,
    now: Date,
    exceptId?: string,
  ): Promise<void> {
    if (await this.team.hasMemberWithEmail(organizationId, email))
      throw alreadyMember(ALREADY_MEMBER_MESSAGE);
    const live = await this.invitations.findLiveIdByEmail(organizationId, email, now);
    if (live && live.id !== exceptId) throw alreadyMember(ALREADY_MEMBER_MESSAGE);
  }

  /**
   * Name and password of the account an accept creates, or of the unproven account it claims; 400
   * VALIDATION_ERROR naming what is missing.
   */
  private newAccountPassword(dto: AcceptInvitationDto, kind: 'create' | 'claim'): string {
    const missing = (['name', 'password'] as const).filter((field) => dto[field] === undefined);
    if (missing.length > 0) {
      const why =
        kind === 'create'
          ? 'This e-mail address has no account yet: name and password are required'
          : 'The account of this address was never confirmed: set its name and a new password to claim it';
      throw AppError.validation(
        why,
        missing.map((field) => ({ field, message: `${field} is required to ${kind} the account` })),
      );
    }
    return dto.password!;
  }

  /**
   * The caller holds the proven account the invitation names: signed in as it (a session that is not scoped to
   * another organization's SSO), or its password sent. A password sent is checked even beside a session.
   */
  private async assertAccountHolder(
    account: UserRow,
    dto: AcceptInvitationDto,
    caller: Actor | undefined,
    meta: RequestMeta,
  ): Promise<void> {
    if (dto.password !== undefined) {
      if (await verifyPassword(account.passwordHash, dto.password)) return;
      await this.auth.recordFailure(account, 'invite', 'invalid_password', meta);
      throw AppError.unauthorized('Invalid e-mail or password', ErrorCode.INVALID_CREDENTIALS);
    }
    if (caller?.userId === account.id && caller.credential === 'jwt') {
      if (!caller.ssoScoped) return;
      throw new AppError(
        403,
        ErrorCode.REAUTHENTICATION_REQUIRED,
        'This session was opened by an organization’s single sign-on; sign in with your own password or a ' +
          'magic link, or send your password, to join another organization',
      );
    }
    throw AppError.unauthorized(
      'This address has an account: sign in as it, or send its password, to accept the invitation',
    );
  }

  /** The mailbox's holder takes over an unproven account: new credentials, and nothing of its maker left open. */
  private async claim(userId: string, name: string, passwordHash: string, now: Date): Promise<UserRow> {
    const user = await this.users.claimUnproven(userId, { via: 'invitation', name, passwordHash }, now);
    if (!user) throw AppError.conflict('The account changed while the invitation was accepted; try again');
    await this.sessions.revokeAllForUser(userId);
    for (const purpose of ['password_reset', 'magic_link', 'stream'] as const) {
      await this.oneTimeTokens.revokeOutstanding(userId, purpose);
    }
    return user;
  }

  private async createUser(
    id: string,
    email: string,
    name: string,
    passwordHash: string,
    now: Date,
  ): Promise<UserRow> {
    const user = await this.users.insertIfEmailFree({
      id,
      email,
      name,
      passwordHash,
      passwordChangedAt: now,
      emailVerifiedAt: now,
      emailVerifiedVia: 'invitation',
      createdAt: now,
      updatedAt: now,
    });
    // A sign-up took the address between the lookup and here: the invitation stays pending, a retry accepts it
    // for the existing account.
    if (!user)
      throw AppError.conflict(
        'An account with this e-mail address was just created; retry',
        ErrorCode.EMAIL_IN_USE,
      );
    return user;
  }

  private async sendInvitation(
    organization: OrganizationRow,
    inviterEmail: string | null,
    to: string,
    role: Role,
    token: string,
  ): Promise<void> {
    await this.mail.send({
      to,
      organizationId: organization.id,
      template: 'team-invite',
      ...TeamMail.invitation(this.config.appUrl, {
        organizationName: organization.name,
        inviterEmail,
        role,
        token,
      }),
    });
  }
}
