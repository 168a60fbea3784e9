import { SSO_REQUIRED } from './auth.errors.js';

/** The OpenAPI text of the e-mail sign-up, password and magic-link routes (email-flows.controller.ts). */

const INVALID_TOKEN = 'INVALID_TOKEN (unknown, used or expired token), VALIDATION_ERROR';

export const EMAIL_FLOW_DOCS = {
  requestSignup:
    'Always 202 with the same body. A new address receives a confirmation link (valid 24 hours); an address that already has an account receives a note instead. No JWT is returned.',
  completeSignup: 'Exchanges the confirmation token for the first JWT. Writes `auth.register`.',
  forgotPassword:
    'Always 200 with the same body and timing. An existing account receives a link valid one hour, single use. ' +
    'An address whose domain an organization verified and enforces SSO for gets 403 `SSO_REQUIRED` with ' +
    '`details.ssoUrl` instead (decided by the domain alone, whether or not an account exists).',
  resetPassword:
    'Revokes every session of the user. Writes `auth.password_reset`. 403 `SSO_REQUIRED` when the address’s ' +
    'organization has enforced SSO since the link was sent.',
  changePassword:
    'Needs the current password; revokes every other session of the user. Writes `auth.password_changed`.',
  magicLink:
    'Always 200 with the same body. The link is valid 15 minutes, single use. An address whose domain an ' +
    'organization verified and enforces SSO for gets 403 `SSO_REQUIRED` with `details.ssoUrl` instead (decided ' +
    'by the domain alone).',
  verifyMagicLink:
    'Answers as login. Writes `auth.login` with `metadata.method = "magic_link"`. The session opens in the ' +
    'oldest membership whose organization does not enforce SSO for the address; 403 `SSO_REQUIRED` when none.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const EMAIL_FLOW_ERRORS = {
  completeSignup: { 400: INVALID_TOKEN, 409: 'EMAIL_IN_USE (the address was registered meanwhile)' },
  ssoRequired: { 403: SSO_REQUIRED },
  resetPassword: { 400: INVALID_TOKEN, 403: SSO_REQUIRED },
  changePassword: {
    400: 'VALIDATION_ERROR (weak new password; `details` names currentPassword when it is wrong)',
  },
  verifyMagicLink: {
    400: INVALID_TOKEN,
    401: 'ACCOUNT_DEACTIVATED, ORGANIZATION_DELETED (as login)',
    403: SSO_REQUIRED,
  },
} as const;
