import { AppError, moduleErrorCodes } from '#platform';

/** Error codes of the auth routes, beside the generic ones in the platform. */
export const AuthErrorCode = moduleErrorCodes({
  INVALID_TOKEN: 'INVALID_TOKEN',
  /** The organization enforces its single sign-on for this address: sign in through it (`details.ssoUrl`). */
  SSO_REQUIRED: 'SSO_REQUIRED',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof AuthErrorCode)[keyof typeof AuthErrorCode], true> {}
}

/** A sign-up, reset or magic-link token that is unknown, expired or already used (one answer for all three). */
export function invalidToken(): AppError {
  return new AppError(400, AuthErrorCode.INVALID_TOKEN, 'This link is invalid, expired or already used');
}

/** The OpenAPI description of 403 SSO_REQUIRED, on every route that may answer it. */
export const SSO_REQUIRED =
  'SSO_REQUIRED (the organization that verified the address’s domain enforces its single sign-on; ' +
  '`details.ssoUrl` is where sign-in starts)';

/**
 * 403 SSO_REQUIRED: the organization that verified the address's domain enforces its SSO. The body
 * names where sign-in starts (`details.ssoUrl`, the dispatcher that takes `{email}`), never the organization.
 * See docs/identity-administrators.md, "Enforcing single sign-on"; test/sso-enforce.e2e-spec.ts.
 */
export function ssoRequired(
  ssoUrl: string,
  message = 'Your organization requires single sign-on for this address; sign in through your identity provider',
): AppError {
  return new AppError(403, AuthErrorCode.SSO_REQUIRED, message, { extra: { details: { ssoUrl } } });
}
