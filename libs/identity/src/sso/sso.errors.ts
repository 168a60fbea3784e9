/** Error codes of SSO configuration (contract §3), beside the generic ones in the platform. */
export const SsoErrorCode = {
  /** An e-mail domain of the configuration already routes to another organization. */
  SSO_DOMAIN_TAKEN: 'SSO_DOMAIN_TAKEN',
  /** A single-logout message that is unsigned, wrongly signed, malformed, or answers no request of this service. */
  SAML_MESSAGE_INVALID: 'SAML_MESSAGE_INVALID',
} as const;

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof SsoErrorCode)[keyof typeof SsoErrorCode], true> {}
}
