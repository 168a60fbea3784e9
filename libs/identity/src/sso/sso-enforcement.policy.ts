import { Injectable, type OnModuleInit } from '@nestjs/common';
import { SsoEnforcement, type SsoEnforcementPolicy } from '../auth/sso-enforcement.js';
import { SsoDomainsRepository } from './sso-domains.repository.js';
import { domainOf, SsoSignIn } from './sso-sign-in.js';

/**
 * `enforceSso` as the identity core asks it: the organization a verified domain routes to enforces
 * its SSO for the addresses there when its configuration says so and it may sign in with it (live, on a plan with
 * `sso`). A domain that is pending, or failing past its grace period, routes nothing and enforces nothing, so a
 * lost DNS record never locks anyone out of every way in.
 * See docs/identity-administrators.md, "Enforcing single sign-on"; test/sso-enforce.e2e-spec.ts.
 */
@Injectable()
export class SsoEnforcementSource implements SsoEnforcementPolicy, OnModuleInit {
  constructor(
    private readonly enforcement: SsoEnforcement,
    private readonly domains: SsoDomainsRepository,
    private readonly signIns: SsoSignIn,
  ) {}

  onModuleInit(): void {
    this.enforcement.use(this);
  }

  async enforcingOrganization(email: string): Promise<string | undefined> {
    if (!email.includes('@')) return undefined;
    const organizationId = await this.domains.organizationOf(domainOf(email));
    if (!organizationId) return undefined;
    const settings = await this.signIns.usable(organizationId);
    return settings?.config.enforceSso === true ? organizationId : undefined;
  }
}
