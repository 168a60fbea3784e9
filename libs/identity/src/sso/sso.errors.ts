import { moduleErrorCodes } from '#platform';
/**
 * Error codes of SSO configuration (docs/identity-administrators.md, "Single sign-on: the configuration"), beside the
 * generic ones in the platform.
 */
export const SsoErrorCode = moduleErrorCodes({
  /** Another organization verified the e-mail domain first. */
  SSO_DOMAIN_TAKEN: 'SSO_DOMAIN_TAKEN',
  /** The TXT record that proves a domain claim was not found (or could not be looked up). */
  DOMAIN_NOT_VERIFIED: 'DOMAIN_NOT_VERIFIED',
  /** A single-logout message that is unsigned, wrongly signed, malformed, or answers no request of this service. */
  SAML_MESSAGE_INVALID: 'SAML_MESSAGE_INVALID',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof SsoErrorCode)[keyof typeof SsoErrorCode], true> {}
}
