import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { APP_CONFIG, type AppConfig } from '#platform';
import { OAUTH_TOKEN_COOKIE, setCookie, SSO_MFA_COOKIE } from './sso-cookies.js';

/** What a browser sign-in (SSO or social) ends with: a session, or a TOTP still to give. */
export type SignInOutcome = { kind: 'session'; token: string } | { kind: 'mfa'; tempToken: string };

export const AUTH_COOKIE_PATH = '/api/v1/auth';
export const SSO_COOKIE_PATH = '/api/v1/auth/sso';
const SESSION_COOKIE_S = 7 * 86_400;
const MFA_COOKIE_S = 300;

/**
 * The end of a browser sign-in, the same for SSO and social login: the session in the httpOnly
 * `svc_oauth_token` cookie and a redirect to `APP_URL/auth/callback`, or the MFA tempToken in `svc_sso_mfa` and
 * `APP_URL/login?ssoMfa=1`, or `APP_URL/login?error=…` without either; the flow's own cookie cleared each time.
 * See docs/identity-administrators.md, "Single sign-on: OIDC sign-in" and "Social login".
 */
@Injectable()
export class SignInHandOff {
  constructor(@Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'appUrl' | 'nodeEnv'>) {}

  /** A Set-Cookie value with the environment's flags (`Secure; SameSite=None` in production). */
  cookie(name: string, value: string, path: string, maxAgeSeconds: number): string {
    return setCookie(name, value, { path, maxAgeSeconds, production: this.config.nodeEnv === 'production' });
  }

  /** `clear`: the flow's own cookie, cleared (SAML has none). */
  succeed(reply: FastifyReply, outcome: SignInOutcome, clear?: string): FastifyReply {
    const cookies = clear ? [clear] : [];
    return outcome.kind === 'mfa'
      ? reply
          .header('set-cookie', [
            ...cookies,
            this.cookie(SSO_MFA_COOKIE, outcome.tempToken, SSO_COOKIE_PATH, MFA_COOKIE_S),
          ])
          .redirect(`${this.config.appUrl}/login?ssoMfa=1`, 302)
      : reply
          .header('set-cookie', [
            ...cookies,
            this.cookie(OAUTH_TOKEN_COOKIE, outcome.token, AUTH_COOKIE_PATH, SESSION_COOKIE_S),
          ])
          .redirect(`${this.config.appUrl}/auth/callback`, 302);
  }

  fail(reply: FastifyReply, clear: string | undefined, error: 'sso_failed' | 'oauth_failed' | 'sso_required'): FastifyReply {
    if (clear) reply.header('set-cookie', clear);
    return reply.redirect(`${this.config.appUrl}/login?error=${error}`, 302);
  }
}
