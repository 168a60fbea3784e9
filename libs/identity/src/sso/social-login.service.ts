import { Inject, Injectable, Logger } from '@nestjs/common';
import { isEmail } from 'class-validator';
import * as oidc from 'openid-client';
import {
  APP_CONFIG,
  type AppConfig,
  AppError,
  Clock,
  DnsResolver,
  pinnedFetch,
  type PinnedFetch,
  type RequestMeta,
  safeEqual,
  SecretBox,
  SignInMetrics,
  type SocialProvider,
  type SocialProviderConfig,
} from '#platform';
import { AuthService } from '../auth/auth.service.js';
import type { SignInOutcome } from './sign-in-hand-off.js';
import { UsersRepository } from '../users/users.repository.js';
import type { UserRow } from '../users/user.schema.js';
import { normaliseEmail } from '../users/email-address.js';

/** How long a social sign-in may take between the start and the provider's return. */
export const SOCIAL_STATE_TTL_MS = 10 * 60_000;
const HTTP_TIMEOUT_MS = 10_000;
const RESPONSE_MAX_BYTES = 256 * 1024;

/** The sealed cookie of a social sign-in under way: provider, state, PKCE verifier, expiry. */
interface SocialState {
  p: SocialProvider;
  s: string;
  v: string;
  exp: number;
}

export class SocialFailure extends Error {}

/**
 * Social login with GitHub, Google and Microsoft: the authorization-code flow with state and PKCE
 * (S256) kept in a sealed, short-lived, httpOnly cookie; the e-mail is GitHub's primary verified address, Google's
 * verified one, or Microsoft's; a user is matched by that e-mail, or created with an organization of their own.
 * Microsoft does not verify addresses (a tenant's administrator sets them), so a Microsoft sign-in never matches an
 * existing account: it only creates one.
 * A user with TOTP still gives the code (the SSO MFA hand-off), so social login never skips a second factor.
 * See docs/identity-administrators.md, "Social login"; test/social-login.e2e-spec.ts.
 */
@Injectable()
export class SocialLoginService {
  private readonly logger = new Logger('SocialLogin');
  /**
   * The provider calls (token, profile, GitHub's addresses) go through the same pinned fetch as the enterprise IdPs:
   * names resolved once, through SSO_DNS_SERVERS when set, and the connection made to that address. Private
   * addresses are allowed here: these endpoints come from the operator's environment (OAUTH_*_URL), not from a
   * customer, and a deployment may front a provider with its own proxy.
   */
  private readonly providerFetch: PinnedFetch;

  constructor(
    private readonly users: UsersRepository,
    private readonly auth: AuthService,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    @Inject(APP_CONFIG)
    private readonly config: Pick<AppConfig, 'oauthProviders' | 'publicUrl' | 'ssoDnsServers'>,
    private readonly signIns: SignInMetrics,
  ) {
    this.providerFetch = pinnedFetch({
      resolver: new DnsResolver(config.ssoDnsServers),
      allowPrivate: true,
    });
  }

  /** The provider's settings, or 404 when it is not configured. */
  provider(name: string): SocialProviderConfig & { name: SocialProvider } {
    const settings = (this.config.oauthProviders as Record<string, SocialProviderConfig | null>)[name];
    if (!settings) throw AppError.notFound('Login provider');
    return { ...settings, name: name as SocialProvider };
  }

  redirectUri(provider: SocialProvider): string {
    return `${this.config.publicUrl}/api/v1/auth/${provider}/callback`;
  }

  /** Where to send the browser, and the sealed state cookie's value. */
  async start(name: string): Promise<{ url: string; cookie: string }> {
    const provider = this.provider(name);
    const state: SocialState = {
      p: provider.name,
      s: oidc.randomState(),
      v: oidc.randomPKCECodeVerifier(),
      exp: this.clock.nowMs() + SOCIAL_STATE_TTL_MS,
    };
    const url = new URL(provider.authorizationUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', provider.clientId);
    url.searchParams.set('redirect_uri', this.redirectUri(provider.name));
    url.searchParams.set('scope', provider.scope);
    url.searchParams.set('state', state.s);
    url.searchParams.set('code_challenge', await oidc.calculatePKCECodeChallenge(state.v));
    url.searchParams.set('code_challenge_method', 'S256');
    if (provider.name === 'microsoft') url.searchParams.set('prompt', 'select_account');
    return { url: url.href, cookie: this.box.seal(JSON.stringify(state)) };
  }

  /** The provider's return: checks the state against the cookie, exchanges the code, signs the user in. */
  async callback(
    providerName: string,
    query: Record<string, unknown>,
    cookie: string | undefined,
    meta: RequestMeta,
  ): Promise<SignInOutcome> {
    const provider = this.provider(providerName);
    return this.signIns.attempt(
      'social',
      this.verifiedSignIn(provider, query, cookie, meta),
      (err) => err instanceof SocialFailure,
    );
  }

  private async verifiedSignIn(
    provider: SocialProviderConfig & { name: SocialProvider },
    query: Record<string, unknown>,
    cookie: string | undefined,
    meta: RequestMeta,
  ): Promise<SignInOutcome> {
    const state = this.openState(cookie);
    if (!state || state.p !== provider.name) throw new SocialFailure('no sign-in under way in this browser');
    if (state.exp <= this.clock.nowMs()) throw new SocialFailure('the sign-in took too long');
    if (typeof query.state !== 'string' || !safeEqual(query.state, state.s))
      throw new SocialFailure('state mismatch');
    if (typeof query.error === 'string')
      throw new SocialFailure(`the provider answered ${query.error.slice(0, 100)}`);
    if (typeof query.code !== 'string' || query.code.length === 0 || query.code.length > 2048) {
      throw new SocialFailure('no code');
    }
    const accessToken = await this.exchange(provider, query.code, state.v);
    const profile = await this.getJson(provider.userinfoUrl, accessToken);
    const email = await this.emailOf(provider, profile, accessToken);
    const name =
      (typeof profile.name === 'string' && profile.name.trim()) ||
      (typeof profile.login === 'string' && profile.login) ||
      email.split('@')[0]!;
    // Microsoft: the identity at Microsoft (tenant and object), which the account keeps (see signIn).
    const identity =
      provider.name === 'microsoft' && typeof profile.sub === 'string' && profile.sub
        ? `microsoft:${typeof profile.tid === 'string' ? `${profile.tid}:` : ''}${profile.sub}`.slice(0, 255)
        : undefined;
    if (provider.name === 'microsoft' && !identity) throw new SocialFailure('no Microsoft subject');
    return this.signIn(provider.name, email, name.slice(0, 200), identity, meta);
  }

  private openState(cookie: string | undefined): SocialState | undefined {
    if (!cookie || cookie.length > 4096) return undefined;
    try {
      const parsed = JSON.parse(this.box.open(cookie)) as SocialState;
      return typeof parsed.s === 'string' && typeof parsed.v === 'string' ? parsed : undefined;
    } catch {
      return undefined;
    }
  }

  private async exchange(
    provider: SocialProviderConfig & { name: SocialProvider },
    code: string,
    verifier: string,
  ): Promise<string> {
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.redirectUri(provider.name),
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
      code_verifier: verifier,
    });
    const res = await this.fetch(provider.tokenUrl, {
      method: 'POST',
      body,
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    });
    const token = typeof res.access_token === 'string' ? res.access_token : '';
    if (!token) throw new SocialFailure('the provider issued no access token');
    return token;
  }

  private getJson(url: string, accessToken: string): Promise<Record<string, unknown>> {
    return this.fetch(url, {
      headers: { accept: 'application/json', authorization: `Bearer ${accessToken}` },
    });
  }

  /** A JSON object from the provider, within 10 seconds and 256 KiB, or a SocialFailure. */
  private async fetch(url: string, init: RequestInit): Promise<Record<string, unknown>> {
    let res: Response;
    let text: string;
    try {
      res = await this.providerFetch(url, {
        ...init,
        redirect: 'error',
        signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
      });
      const length = Number(res.headers.get('content-length') ?? 0);
      if (length > RESPONSE_MAX_BYTES) throw new SocialFailure('the provider’s answer is too large');
      text = await res.text();
    } catch (err) {
      if (err instanceof SocialFailure) throw err;
      throw new SocialFailure(`the provider could not be reached: ${(err as Error).message.slice(0, 100)}`);
    }
    if (!res.ok) throw new SocialFailure(`the provider answered HTTP ${res.status}`);
    if (Buffer.byteLength(text) > RESPONSE_MAX_BYTES)
      throw new SocialFailure('the provider’s answer is too large');
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>;
    } catch {
      // falls through
    }
    throw new SocialFailure('the provider’s answer is not JSON');
  }

  /** GitHub: the primary verified address; Google: the userinfo e-mail when verified; Microsoft: its e-mail. */
  private async emailOf(
    provider: SocialProviderConfig & { name: SocialProvider },
    profile: Record<string, unknown>,
    accessToken: string,
  ): Promise<string> {
    let email: unknown;
    if (provider.name === 'github') {
      const list = await this.getJson(provider.emailsUrl!, accessToken);
      const entries = Array.isArray(list) ? (list as Array<Record<string, unknown>>) : [];
      email = entries.find((e) => e && e.primary === true && e.verified === true)?.email;
      if (typeof email !== 'string') throw new SocialFailure('no primary verified GitHub address');
    } else {
      if (provider.name === 'google' && profile.email_verified !== true) {
        throw new SocialFailure('the Google address is not verified');
      }
      email = profile.email;
    }
    const normalized = typeof email === 'string' ? normaliseEmail(email) : '';
    if (!isEmail(normalized) || normalized.length > 254) {
      throw new SocialFailure('no usable e-mail address');
    }
    return normalized;
  }

  private async signIn(
    provider: SocialProvider,
    email: string,
    name: string,
    identity: string | undefined,
    meta: RequestMeta,
  ): Promise<SignInOutcome> {
    let user: UserRow | undefined = await this.users.findByEmail(email);
    // Microsoft's e-mail is whatever a tenant's administrator typed: nothing proves the address, so it signs in
    // only the account that this same Microsoft identity created, never another one that has the address.
    if (user && identity && user.ssoId !== identity) {
      throw new SocialFailure('a Microsoft address is not verified, and another account has it');
    }
    const created = !user;
    if (!user) user = await this.createAccount(provider, email, name, identity, meta);
    // Where the sign-in lands first: a refusal (SSO enforced, deactivated) changes nothing of the account.
    const { membership } = await this.auth.signInMembership(user, 'oauth', meta);
    // GitHub's primary verified address and Google's verified one prove the mailbox (and claim an account whose
    // address was never proven); Microsoft's does not.
    if (!created && !identity) user = await this.auth.claimByMailbox(user, 'oauth');
    if (user.mfaEnabled) {
      return {
        kind: 'mfa',
        tempToken: this.auth.mfaChallenge(user.id, membership.organizationId, 'oauth', provider).tempToken,
      };
    }
    const session = await this.auth.completeLogin(user, membership, 'oauth', meta, { provider });
    return { kind: 'session', token: session.token };
  }

  /** A new user and their own organization (owner), as sign-up makes them, without a password. */
  private async createAccount(
    provider: SocialProvider,
    email: string,
    name: string,
    identity: string | undefined,
    meta: RequestMeta,
  ): Promise<UserRow> {
    try {
      const { user } = await this.auth.insertAccount(
        {
          email,
          name,
          passwordHash: null,
          organizationName: `${name}'s organization`.slice(0, 200),
          ...(identity ? { ssoId: identity } : { emailProof: 'oauth' as const }),
        },
        { method: 'oauth', provider },
        meta,
      );
      this.logger.log({ provider, userId: user.id }, 'Account created by social login');
      return user;
    } catch (err) {
      if (err instanceof AppError && err.status === 409) {
        throw new SocialFailure('the account was created meanwhile; sign in again');
      }
      throw err;
    }
  }
}
