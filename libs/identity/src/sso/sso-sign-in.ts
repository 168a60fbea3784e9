import { Injectable, Logger } from '@nestjs/common';
import {
  AuditLog,
  Clock,
  newId,
  planHasFeature,
  type RequestMeta,
  SignInMetrics,
  TransactionHost,
} from '#platform';
import { AuthService } from '../auth/auth.service.js';
import type { MembershipRow } from '../organizations/organization.schema.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import type { SamlSessionRef } from '../sessions/session.service.js';
import type { UserRow } from '../users/user.schema.js';
import { UsersRepository } from '../users/users.repository.js';
import { mapRole } from './role-mapping.js';
import type { SignInOutcome } from './sign-in-hand-off.js';
import { SsoConfigService } from './sso-config.service.js';
import type { SsoProvider, SsoSettings } from './sso-config.types.js';

/** Why a callback was refused: logged and recorded, never shown to the browser (it gets `error=sso_failed`). */
export class SsoFailure extends Error {
  constructor(
    readonly reason: string,
    readonly user?: UserRow,
    /** The organization whose sign-in failed, where its audit log should say so. */
    readonly organizationId?: string,
  ) {
    super(reason);
  }

  /** The reason as a login event records it: snake case, at most 40 characters. */
  get code(): string {
    return this.reason
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_|_$/g, '')
      .slice(0, 40);
  }
}

/** What the IdP said of the user, once verified. */
export interface AssertedIdentity {
  email: string;
  name: string;
  subject: string;
  groups: string[];
  /** A SAML sign-in's NameID and SessionIndex, kept on the session for single logout. */
  saml?: SamlSessionRef;
}

export const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/**
 * The end of an enterprise sign-in, the same for OIDC and SAML once the IdP's word is verified: a
 * known active member signs in, an unknown e-mail is provisioned with the role from the mapping rules, an existing
 * account that is not a member is refused; with `requireMfaEvenWithSso` the outcome is an MFA challenge.
 * See docs/identity-administrators.md, "Single sign-on: OIDC sign-in" (SAML follows the same rules);
 * test/sso-oidc.e2e-spec.ts, test/sso-saml-*.e2e-spec.ts.
 */
@Injectable()
export class SsoSignIn {
  private readonly logger = new Logger('SsoLogin');

  constructor(
    private readonly ssoConfig: SsoConfigService,
    private readonly organizations: OrganizationsRepository,
    private readonly users: UsersRepository,
    private readonly auth: AuthService,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly signInMetrics: SignInMetrics,
  ) {}

  /** The organization's SSO settings when it may sign in with them: live, on a plan with sso. */
  async usable(organizationId: string): Promise<SsoSettings | undefined> {
    const organization = await this.organizations.findById(organizationId);
    if (!organization || organization.deletedAt || !planHasFeature(organization.plan, 'sso'))
      return undefined;
    return this.ssoConfig.settings(organizationId);
  }

  async signIn(
    organizationId: string,
    provider: SsoProvider,
    settings: SsoSettings,
    identity: AssertedIdentity,
    meta: RequestMeta,
  ): Promise<SignInOutcome> {
    if (!settings.emailDomains.includes(domainOf(identity.email))) {
      throw new SsoFailure('email outside the organization’s SSO domains');
    }
    let user = await this.users.findByEmail(identity.email);
    let membership: MembershipRow | undefined;
    if (!user) {
      ({ user, membership } = await this.provision(organizationId, provider, settings, identity, meta));
    } else {
      membership = await this.organizations.membership(organizationId, user.id);
      // An account that exists already joins an organization by invitation or SCIM, not by an IdP's say-so.
      if (!membership) throw new SsoFailure('not a member of the organization', user, organizationId);
      if (!user.isActive || !membership.isActive) throw new SsoFailure('suspended', user, organizationId);
    }
    // An IdP vouches for who the user is, not for the account's second factor: an account with TOTP that this
    // organization's SSO or SCIM did not create gives its code, as every account does with
    // requireMfaEvenWithSso. So an IdP set up for the organization cannot sign its owner in past the owner's TOTP
    // (docs/identity-administrators.md, "Single sign-on: OIDC sign-in"; test/tenant-takeover-*.e2e-spec.ts).
    const organizationsOwnAccount = user.originOrganizationId === organizationId;
    if (settings.config.requireMfaEvenWithSso || (user.mfaEnabled && !organizationsOwnAccount)) {
      if (!user.mfaEnabled) throw new SsoFailure('MFA required after SSO, none set up', user, organizationId);
      return {
        kind: 'mfa',
        tempToken: this.auth.mfaChallenge(user.id, organizationId, 'sso', provider, identity.saml).tempToken,
      };
    }
    const session = await this.auth.completeLogin(user, membership, 'sso', meta, { provider }, identity.saml);
    this.signInMetrics.succeeded(provider);
    return { kind: 'session', token: session.token };
  }

  /** Records a refused callback: a failed login of the account, when the IdP named one. */
  async recordFailure(failure: SsoFailure, meta: RequestMeta, provider: SsoProvider): Promise<void> {
    this.logger.warn({ reason: failure.reason }, 'SSO sign-in refused');
    this.signInMetrics.failed(provider);
    if (failure.user) {
      await this.auth.recordFailure(failure.user, 'sso', failure.code, meta, failure.organizationId ?? null);
    }
  }

  /** The first SSO sign-in of an unknown e-mail: the account (no password) and the membership, mapped role. */
  private async provision(
    organizationId: string,
    provider: SsoProvider,
    settings: SsoSettings,
    identity: AssertedIdentity,
    meta: RequestMeta,
  ): Promise<{ user: UserRow; membership: MembershipRow }> {
    const role = mapRole(settings.roleMappingRules, identity.groups);
    return this.tx.run(async () => {
      const now = this.clock.now();
      const user = await this.users.insertIfEmailFree({
        id: newId(now.getTime()),
        email: identity.email,
        name: identity.name,
        passwordHash: null,
        ssoId: identity.subject.slice(0, 255),
        // The organization's own account; its address is the IdP's word, not a proof of the mailbox.
        originOrganizationId: organizationId,
        createdAt: now,
        updatedAt: now,
      });
      if (!user) throw new SsoFailure('the account was created meanwhile; sign in again');
      const membership = await this.organizations.insertMembership({
        id: newId(now.getTime()),
        organizationId,
        userId: user.id,
        role,
        isActive: true,
        createdAt: now,
        updatedAt: now,
      });
      await this.audit.record(
        { organizationId, actor: { type: 'user', id: user.id, email: user.email } },
        'sso.user.provisioned',
        { type: 'user', id: user.id },
        { provider, role, groups: identity.groups.slice(0, 20) },
        meta,
      );
      return { user, membership };
    });
  }
}
