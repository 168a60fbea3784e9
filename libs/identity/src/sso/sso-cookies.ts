/**
 * The cookies of the browser sign-in flows (docs/identity-administrators.md: "Single sign-on: OIDC sign-in",
 * "Single sign-on: SAML sign-in and single logout", "Social login"). None is ever put in a URL.
 */
export const SSO_BINDING_COOKIE = 'svc_sso_binding';
export const OAUTH_TOKEN_COOKIE = 'svc_oauth_token';
export const SSO_MFA_COOKIE = 'svc_sso_mfa';
/**
 * Ties a SAML sign-in to the browser that started it. The IdP posts the response cross-site, so the cookie is
 * `SameSite=None; Secure` in every environment (browsers keep Secure cookies of http://localhost too).
 */
export const SAML_BINDING_COOKIE = 'svc_saml_binding';
export const SAML_COOKIE_PATH = '/api/v1/auth/saml';

export function samlBindingCookie(value: string, maxAgeSeconds: number): string {
  return `${SAML_BINDING_COOKIE}=${encodeURIComponent(value)}; Path=${SAML_COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=None`;
}

/** The value of a cookie in a Cookie header, or undefined (a malformed header reads as absent). */
export function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join('; ') : header;
  if (!text || text.length > 16_384) return undefined;
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * A Set-Cookie value: HttpOnly always; in production `Secure; SameSite=None` (the dashboard may be on another
 * site), else `SameSite=Lax`. `maxAgeSeconds` 0 clears it.
 */
export function setCookie(
  name: string,
  value: string,
  options: { path: string; maxAgeSeconds: number; production: boolean },
): string {
  const site = options.production ? 'Secure; SameSite=None' : 'SameSite=Lax';
  return `${name}=${encodeURIComponent(value)}; Path=${options.path}; Max-Age=${options.maxAgeSeconds}; HttpOnly; ${site}`;
}
