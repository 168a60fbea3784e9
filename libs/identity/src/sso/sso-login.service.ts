import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { isEmail } from 'class-validator';
import * as oidc from 'openid-client';
import {
  APP_CONFIG,
  type AppConfig,
  Clock,
  JobScheduler,
  type RequestMeta,
  safeEqual,
  SecretBox,
  sha256Hex,
} from '#platform';
import { OidcConfigurations } from './oidc-configurations.js';
import { GROUPS_MAX } from './role-mapping.js';
import { SamlLoginService } from './saml-login.service.js';
import type { SignInOutcome } from './sign-in-hand-off.js';
import { SsoDomainsRepository } from './sso-domains.repository.js';
import { SsoLoginStatesRepository } from './sso-login-states.repository.js';
import { domainOf, SsoFailure, SsoSignIn } from './sso-sign-in.js';
import { normaliseEmail } from '../users/email-address.js';

/** A sign-in may take this long between the initiate call and the IdP's return. */
export const SSO_STATE_TTL_MS = 10 * 60_000;
const PURGE_INTERVAL_MS = 3_600_000;

/**
 * Enterprise sign-in through an organization's OIDC identity provider: the dispatcher finds the
 * organization by the e-mail's domain and answers the IdP's authorization URL (code flow, PKCE S256, state and
 * nonce), or for a SAML organization its entry point with an AuthnRequest; the callback takes the state once (a database row, so once across replicas, and bound to the browser
 * that started it by a cookie), exchanges the code with openid-client (issuer, audience, expiry, nonce and the
 * signature algorithm checked; `none` refused), and signs the user in: a known member, or an unknown e-mail
 * provisioned with the role from the mapping rules. An existing account that is not a member is not linked.
 * See docs/identity-administrators.md, "Single sign-on: OIDC sign-in"; test/sso-oidc.e2e-spec.ts.
 */
@Injectable()
export class SsoLoginService implements OnModuleInit {
  private readonly logger = new Logger('SsoLogin');

  constructor(
    private readonly domains: SsoDomainsRepository,
    private readonly signIns: SsoSignIn,
    private readonly saml: SamlLoginService,
    private readonly oidcConfigurations: OidcConfigurations,
    private readonly box: SecretBox,
    private readonly states: SsoLoginStatesRepository,
    private readonly clock: Clock,
    private readonly scheduler: JobScheduler,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'appUrl' | 'publicUrl'>,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'sso-login-states-purge',
      intervalMs: PURGE_INTERVAL_MS,
      mode: 'once-per-period',
      run: () => this.states.purgeExpired(this.clock.now()),
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
  async initiate(email: string): Promise<{ redirectUrl: string; binding?: string; samlBinding?: string }> {
    const unavailable = { redirectUrl: `${this.config.appUrl}/login?sso=unavailable` };
    const organizationId = await this.domains.organizationOf(domainOf(email));
    const settings = organizationId ? await this.signIns.usable(organizationId) : undefined;
    if (organizationId && settings?.config.provider === 'saml' && settings.config.saml) {
      try {
        const { redirectUrl, binding } = await this.saml.authorizeUrl(organizationId, settings.config.saml);
        return { redirectUrl, samlBinding: binding };
      } catch (err) {
        this.logger.warn({ err, organizationId }, 'No SAML AuthnRequest; SSO answered as unavailable');
        return unavailable;
      }
    }
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
    await this.states.insert(organizationId, {
      id: sha256Hex(state),
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
    const row = await this.states.take(sha256Hex(state));
    if (!row) throw new SsoFailure('unknown or used state');
    if (row.expiresAt.getTime() <= this.clock.nowMs()) throw new SsoFailure('expired state');
    if (!binding || !safeEqual(sha256Hex(binding), row.browserHash)) {
      throw new SsoFailure('state started in another browser');
    }
    if (typeof query.error === 'string')
      throw new SsoFailure(`the IdP answered ${query.error.slice(0, 100)}`);
    const settings = await this.signIns.usable(row.organizationId);
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
    const email = typeof claims.email === 'string' ? normaliseEmail(claims.email) : '';
    if (!isEmail(email) || email.length > 254) throw new SsoFailure('no usable email claim');
    if (claims.email_verified === false) throw new SsoFailure('email not verified by the IdP');
    const rawGroups = claims[oidcSettings.groupsClaim];
    const groups = (Array.isArray(rawGroups) ? rawGroups : typeof rawGroups === 'string' ? [rawGroups] : [])
      .filter((g): g is string => typeof g === 'string')
      .slice(0, GROUPS_MAX);
    const name =
      typeof claims.name === 'string' && claims.name.trim()
        ? claims.name.trim().slice(0, 200)
        : email.split('@')[0]!;
    return this.signIns.signIn(
      row.organizationId,
      'oidc',
      settings,
      { email, name, subject: claims.sub, groups },
      meta,
    );
  }
}
