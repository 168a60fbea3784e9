import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { isEmail } from 'class-validator';
import { eq, lt } from 'drizzle-orm';
import * as oidc from 'openid-client';
import {
  APP_CONFIG,
  type AppConfig,
  AuditLog,
  Clock,
  deleteInBatches,
  JobScheduler,
  newId,
  planHasFeature,
  type RequestMeta,
  safeEqual,
  SecretBox,
  sha256Hex,
  TransactionHost,
} from '#platform';
import { AuthService } from '../auth/auth.service.js';
import type { SignInOutcome } from './sign-in-hand-off.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import type { MembershipRow } from '../organizations/organization.schema.js';
import { UsersRepository } from '../users/users.repository.js';
import type { UserRow } from '../users/user.schema.js';
import { OidcConfigurations } from './oidc-configurations.js';
import { GROUPS_MAX, mapRole } from './role-mapping.js';
import { SsoConfigService } from './sso-config.service.js';
import type { SsoSettings } from './sso-config.types.js';
import { SsoDomainsRepository } from './sso-domains.repository.js';
import { ssoLoginStates, type SsoLoginStateRow } from './sso.schema.js';

/** A sign-in may take this long between the initiate call and the IdP's return. */
export const SSO_STATE_TTL_MS = 10 * 60_000;
const PURGE_INTERVAL_MS = 3_600_000;

/** Why a callback was refused: logged and recorded, never shown to the browser (it gets `error=sso_failed`). */
export class SsoFailure extends Error {
  constructor(
    readonly reason: string,
    readonly user?: UserRow,
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
interface AssertedIdentity {
  email: string;
  name: string;
  subject: string;
  groups: string[];
}

const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/**
 * Enterprise sign-in (contract §3) through an organization's OIDC identity provider: the dispatcher finds the
 * organization by the e-mail's domain and answers the IdP's authorization URL (code flow, PKCE S256, state and
 * nonce); the callback takes the state once (a database row, so once across replicas, and bound to the browser
 * that started it by a cookie), exchanges the code with openid-client (issuer, audience, expiry, nonce and the
 * signature algorithm checked; `none` refused), and signs the user in: a known member, or an unknown e-mail
 * provisioned with the role from the mapping rules. An existing account that is not a member is not linked.
 */
@Injectable()
export class SsoLoginService implements OnModuleInit {
  private readonly logger = new Logger('SsoLogin');

  constructor(
    private readonly domains: SsoDomainsRepository,
    private readonly ssoConfig: SsoConfigService,
    private readonly organizations: OrganizationsRepository,
    private readonly users: UsersRepository,
    private readonly auth: AuthService,
    private readonly oidcConfigurations: OidcConfigurations,
    private readonly box: SecretBox,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly scheduler: JobScheduler,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'appUrl' | 'publicUrl'>,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'sso-login-states-purge',
      intervalMs: PURGE_INTERVAL_MS,
      run: () =>
        deleteInBatches(
          this.tx.db,
          ssoLoginStates,
          ssoLoginStates.id,
          lt(ssoLoginStates.expiresAt, this.clock.now()),
          1000,
        ),
    });
  }

  get redirectUri(): string {
    return `${this.config.publicUrl}/api/v1/auth/sso/callback`;
  }

  /**
   * The dispatcher: the IdP's authorization URL for an e-mail of an SSO domain, and the browser binding to set as a
   * cookie; `APP_URL/login?sso=unavailable` otherwise. The answer depends on the domain only, never on whether an
   * account exists.
   */
  async initiate(email: string): Promise<{ redirectUrl: string; binding?: string }> {
    const unavailable = { redirectUrl: `${this.config.appUrl}/login?sso=unavailable` };
    const organizationId = await this.domains.organizationOf(domainOf(email));
    const settings = organizationId ? await this.usable(organizationId) : undefined;
    if (!organizationId || !settings?.config.oidc) return unavailable;
    let configuration: oidc.Configuration;
    try {
      configuration = await this.oidcConfigurations.get(
        organizationId,
        settings.config.oidc,
        settings.config.updatedAt,
      );
    } catch (err) {
      this.logger.warn({ err, organizationId }, 'OIDC discovery failed; SSO answered as unavailable');
      return unavailable;
    }
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const verifier = oidc.randomPKCECodeVerifier();
    const binding = randomBytes(32).toString('base64url');
    let url: URL;
    try {
      url = oidc.buildAuthorizationUrl(configuration, {
        redirect_uri: this.redirectUri,
        scope: settings.config.oidc.scopes.join(' '),
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        login_hint: email,
      });
    } catch (err) {
      // The IdP's metadata has no usable authorization endpoint.
      this.logger.warn(
        { err, organizationId },
        'No authorization URL from the IdP; SSO answered as unavailable',
      );
      return unavailable;
    }
    const now = this.clock.now();
    await this.tx.db.insert(ssoLoginStates).values({
      id: sha256Hex(state),
      organizationId,
      provider: 'oidc',
      nonce,
      codeVerifierSealed: this.box.seal(verifier),
      browserHash: sha256Hex(binding),
      expiresAt: new Date(now.getTime() + SSO_STATE_TTL_MS),
      createdAt: now,
    });
    return { redirectUrl: url.href, binding };
  }

  /** The IdP's return: verifies everything and signs the user in, or throws SsoFailure. */
  async callback(
    query: Record<string, unknown>,
    rawQuery: string,
    binding: string | undefined,
    meta: RequestMeta,
  ): Promise<SignInOutcome> {
    const state = query.state;
    if (typeof state !== 'string' || state.length === 0 || state.length > 512)
      throw new SsoFailure('no state');
    const row = await this.takeState(sha256Hex(state));
    if (!row) throw new SsoFailure('unknown or used state');
    if (row.expiresAt.getTime() <= this.clock.nowMs()) throw new SsoFailure('expired state');
    if (!binding || !safeEqual(sha256Hex(binding), row.browserHash)) {
      throw new SsoFailure('state started in another browser');
    }
    if (typeof query.error === 'string')
      throw new SsoFailure(`the IdP answered ${query.error.slice(0, 100)}`);
    const settings = await this.usable(row.organizationId);
    if (!settings?.config.oidc) throw new SsoFailure('SSO is no longer configured with OIDC');
    const oidcSettings = settings.config.oidc;
    let claims: oidc.IDToken;
    try {
      const configuration = await this.oidcConfigurations.get(
        row.organizationId,
        oidcSettings,
        settings.config.updatedAt,
      );
      const tokens = await oidc.authorizationCodeGrant(
        configuration,
        new URL(`${this.redirectUri}?${rawQuery}`),
        {
          pkceCodeVerifier: this.box.open(row.codeVerifierSealed),
          expectedState: state,
          expectedNonce: row.nonce,
          idTokenExpected: true,
        },
      );
      claims = tokens.claims()!;
    } catch (err) {
      throw new SsoFailure(`token exchange refused: ${(err as Error).message.slice(0, 200)}`);
    }
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (!isEmail(email) || email.length > 254) throw new SsoFailure('no usable email claim');
    if (claims.email_verified === false) throw new SsoFailure('email not verified by the IdP');
    if (!settings.emailDomains.includes(domainOf(email))) {
      throw new SsoFailure('email outside the organization’s SSO domains');
    }
    const rawGroups = claims[oidcSettings.groupsClaim];
    const groups = (Array.isArray(rawGroups) ? rawGroups : typeof rawGroups === 'string' ? [rawGroups] : [])
      .filter((g): g is string => typeof g === 'string')
      .slice(0, GROUPS_MAX);
    const name =
      typeof claims.name === 'string' && claims.name.trim()
        ? claims.name.trim().slice(0, 200)
        : email.split('@')[0]!;
    return this.signIn(row.organizationId, settings, { email, name, subject: claims.sub, groups }, meta);
  }

  /** Records a refused callback: a failed login of the account, when the IdP named one. */
  async recordFailure(failure: SsoFailure, meta: RequestMeta): Promise<void> {
    this.logger.warn({ reason: failure.reason }, 'SSO sign-in refused');
    if (failure.user) await this.auth.recordFailure(failure.user, 'sso', failure.code, meta);
  }

  private async signIn(
    organizationId: string,
    settings: SsoSettings,
    identity: AssertedIdentity,
    meta: RequestMeta,
  ): Promise<SignInOutcome> {
    let user = await this.users.findByEmail(identity.email);
    let membership: MembershipRow | undefined;
    if (!user) {
      ({ user, membership } = await this.provision(organizationId, settings, identity, meta));
    } else {
      membership = await this.organizations.membership(organizationId, user.id);
      // An account that exists already joins an organization by invitation or SCIM, not by an IdP's say-so.
      if (!membership) throw new SsoFailure('not a member of the organization', user);
      if (!user.isActive || !membership.isActive) throw new SsoFailure('suspended', user);
    }
    if (settings.config.requireMfaEvenWithSso) {
      if (!user.mfaEnabled) throw new SsoFailure('MFA required after SSO, none set up', user);
      return {
        kind: 'mfa',
        tempToken: this.auth.mfaChallenge(user.id, organizationId, 'sso', 'oidc').tempToken,
      };
    }
    const session = await this.auth.completeLogin(user, membership, 'sso', meta, { provider: 'oidc' });
    return { kind: 'session', token: session.token };
  }

  /** The first SSO sign-in of an unknown e-mail: the account (no password) and the membership, mapped role. */
  private async provision(
    organizationId: string,
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
        { provider: 'oidc', role, groups: identity.groups.slice(0, 20) },
        meta,
      );
      return { user, membership };
    });
  }

  /** The organization's SSO settings when it may sign in with them: live, on a plan with sso. */
  private async usable(organizationId: string): Promise<SsoSettings | undefined> {
    const organization = await this.organizations.findById(organizationId);
    if (!organization || organization.deletedAt || !planHasFeature(organization.plan, 'sso'))
      return undefined;
    return this.ssoConfig.settings(organizationId);
  }

  /** Takes a state once: the row is deleted as it is read. */
  private async takeState(id: string): Promise<SsoLoginStateRow | undefined> {
    const [row] = await this.tx.db.delete(ssoLoginStates).where(eq(ssoLoginStates.id, id)).returning();
    return row;
  }
}
