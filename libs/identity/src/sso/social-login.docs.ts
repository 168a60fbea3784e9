import { CODE, STATE } from './sso-login.docs.js';

/** The OpenAPI text of the social-login routes (social-login.controller.ts), kept out of the controller. */

/** A provider's return: listed as stacked decorators would be, so the document shows state, then code. */
export const RETURN_QUERY = [CODE, STATE];

const start = (provider: string, extra = '') =>
  `Browser redirect (302) to ${provider}${extra}, with state and PKCE (S256) in the sealed httpOnly cookie ` +
  '`svc_oauth_state` (10 minutes). 404 when the provider is not configured.';
const toProvider = (provider: string) => [{ status: 302, description: `To ${provider}.` }];

export const SOCIAL_LOGIN_DOCS = {
  github: start('GitHub', ' (scope `read:user user:email`)'),
  google: start('Google'),
  microsoft: start('Microsoft', ' (`prompt=select_account`)'),
  /** Every provider's return. */
  callback:
    'Checks the state against the cookie, exchanges the code (PKCE), takes the e-mail (GitHub: the primary ' +
    'verified address; Google: only when verified), and signs in the user with that e-mail or creates one with ' +
    'an organization. Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie (7 ' +
    'days; `Secure; SameSite=None` in production), collected by `GET /auth/oauth-token`; a user with TOTP goes ' +
    'to `APP_URL/login?ssoMfa=1` with `svc_sso_mfa`. Failure: 302 to `APP_URL/login?error=oauth_failed`, or ' +
    '`error=sso_required` when the organization of every membership enforces its SSO for the address. Writes ' +
    '`auth.login` with `metadata.method = "oauth"` and the provider. No token in any URL.',
} as const;

/** Answers other than the envelope: the browser redirects. */
export const SOCIAL_LOGIN_RESPONSES = {
  github: toProvider('GitHub'),
  google: toProvider('Google'),
  microsoft: toProvider('Microsoft'),
  callback: [
    {
      status: 302,
      description: 'To the dashboard: signed in, MFA next, `error=oauth_failed` or `error=sso_required`.',
    },
  ],
} as const;
