/** The OpenAPI text of the enterprise sign-in routes (sso-login.controller.ts), kept out of the controller. */

/** The query an OAuth or OIDC provider returns with (both optional: a refusal may carry neither). */
export const STATE = { name: 'state', required: false, type: String };
export const CODE = { name: 'code', required: false, type: String };

export const SSO_LOGIN_DOCS = {
  initiate:
    'Always 200 `{redirectUrl}`: for an e-mail of an SSO domain, the IdP’s authorization URL (OIDC: code flow ' +
    'with PKCE S256, state and nonce, with the cookie `svc_sso_binding` that ties the sign-in to this browser for ' +
    '10 minutes; SAML: the entry point carrying a deflated AuthnRequest on the HTTP-Redirect binding, with the ' +
    'cookie `svc_saml_binding` (`SameSite=None; Secure`, since the IdP posts back cross-site)); otherwise ' +
    '`APP_URL/login?sso=unavailable`. The answer depends on the domain only, never on ' +
    'whether an account exists. Call it with credentials, so that the browser keeps the cookie.',
  callback:
    'The redirect URI registered at the IdP. Takes the state once (it must come from this browser: the ' +
    '`svc_sso_binding` cookie), exchanges the code (PKCE) and checks the ID token (issuer, audience, expiry, ' +
    'nonce, signature; `none` refused), requires a verified e-mail of the organization’s SSO domains, and signs ' +
    'in a member or provisions an unknown e-mail (role from the mapping rules; an existing account that is not a ' +
    'member is refused). Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie, or, ' +
    'with `requireMfaEvenWithSso`, 302 to `APP_URL/login?ssoMfa=1` with `svc_sso_mfa`. Any failure: 302 to ' +
    '`APP_URL/login?error=sso_failed`, no session cookie. Writes `auth.login` with `metadata.method = "sso"`.',
  oauthToken:
    'Answers `{token}` from the httpOnly `svc_oauth_token` cookie and clears it (once). No cookie: 401. The token ' +
    'never appears in a URL.',
  mfaExchange:
    'With `requireMfaEvenWithSso`, the callback leaves a 5-minute tempToken in the httpOnly `svc_sso_mfa` cookie ' +
    'and sends the browser to `APP_URL/login?ssoMfa=1`. This answers `{tempToken}` and clears the cookie; post it ' +
    'with a TOTP code to `/auth/mfa/login`. No cookie: 401.',
} as const;

/** Answers other than the envelope. */
export const SSO_LOGIN_RESPONSES = {
  callback: [{ status: 302, description: 'To the dashboard: signed in, MFA next, or `error=sso_failed`.' }],
} as const;
