import { Inject, Injectable } from '@nestjs/common';
import {
  actionMail,
  APP_CONFIG,
  type AppConfig,
  AuditLog,
  MailService,
  type RequestMeta,
} from '#platform';
import { MembersRepository } from '../organizations/members.repository.js';
import type { UserRow } from '../users/user.schema.js';
import { ssoRequired } from './auth.errors.js';

/**
 * Which organization enforces its single sign-on for an address: the one whose verified (routing) domain holds
 * it, when that organization turned `enforceSso` on, is live and on a plan with `sso`. A domain routes to one
 * organization at most, so an address has at most one. Provided by the SSO module, which owns domains and
 * configurations.
 */
export interface SsoEnforcementPolicy {
  enforcingOrganization(email: string): Promise<string | undefined>;
}

/**
 * The seam between the sign-in paths of the identity core (password, magic link, password reset, switch-org,
 * MFA) and the SSO module (`enforceSso`). The SSO module installs its policy at start; without it
 * nothing is enforced, as there is no SSO to send anyone to.
 * See docs/identity-administrators.md, "Enforcing single sign-on"; test/sso-enforce.e2e-spec.ts.
 */
@Injectable()
export class SsoEnforcement {
  private policy: SsoEnforcementPolicy | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'publicUrl' | 'appUrl'>,
    private readonly members: MembersRepository,
    private readonly mail: MailService,
    private readonly audit: AuditLog,
  ) {}

  use(policy: SsoEnforcementPolicy): void {
    this.policy = policy;
  }

  /** The organization that requires its SSO of this address, if any. */
  enforcingOrganization(email: string): Promise<string | undefined> {
    return this.policy ? this.policy.enforcingOrganization(email) : Promise.resolve(undefined);
  }

  /** Where sign-in starts: the dispatcher (`POST` with `{email}`), which sends the address to its IdP. */
  get ssoUrl(): string {
    return `${this.config.publicUrl}/api/v1/auth/sso/initiate`;
  }

  /** 403 SSO_REQUIRED. */
  refusal(message?: string) {
    return ssoRequired(this.ssoUrl, message);
  }

  /**
   * For the public requests that mail a link (magic link, password reset): refused when the address's domain
   * enforces SSO. The answer depends on the domain only, as the dispatcher's does, never on whether an account
   * exists.
   */
  async assertMailSignInAllowed(email: string): Promise<void> {
    if (await this.enforcingOrganization(email)) throw this.refusal();
  }

  /**
   * An owner's sign-in past the enforced SSO (password and TOTP): `auth.sso_break_glass` in the organization, and
   * a message to every other owner. Runs in the transaction that opened the session.
   */
  async recordBreakGlass(
    user: UserRow,
    organizationId: string,
    factor: string,
    meta: RequestMeta,
  ): Promise<void> {
    await this.audit.record(
      { organizationId, actor: { type: 'user', id: user.id, email: user.email } },
      'auth.sso_break_glass',
      { type: 'user', id: user.id },
      { mfaFactor: factor },
      meta,
    );
    const others = (await this.members.listEmailsByRoles(organizationId, ['owner'])).filter(
      (to) => to !== user.email,
    );
    for (const to of others) {
      await this.mail.send({
        to,
        organizationId,
        template: 'sso-break-glass',
        ...actionMail({
          subject: 'An owner signed in without single sign-on',
          greeting: 'Hello,',
          intro:
            `${user.email} signed in to your organization with a password and an authenticator code, past the ` +
            'single sign-on your organization enforces. This path is kept for owners when the identity provider ' +
            'is unavailable. If you did not expect it, review the audit log and the owner’s sessions.',
          actionLabel: 'Open the audit log',
          actionUrl: `${this.config.appUrl}/audit`,
          outro: 'You receive this because you are an owner of the organization.',
        }),
      });
    }
  }
}
