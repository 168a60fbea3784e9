import { SSO_REQUIRED } from '../auth/auth.errors.js';

/** The OpenAPI text of the MFA routes (mfa.controller.ts), kept out of the controller. */

const INVALID_CODE =
  'INVALID_MFA_CODE (wrong code, a code already used in its 30-second step, or a used backup code)';
const WRONG_STATE_ON = 'CONFLICT (MFA is already enabled)';
const WRONG_STATE_OFF = 'CONFLICT (MFA is not enabled)';
const JWT_401 = 'UNAUTHORIZED, SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED';
/** A code checked while MFA is on: a wrong one is 401, MFA off is 409. */
const CODE_WHILE_ON = { 401: `${INVALID_CODE}; ${JWT_401}`, 409: WRONG_STATE_OFF };

export const MFA_DOCS = {
  setup:
    'Generates a TOTP secret (SHA-1, 6 digits, 30 s) and its QR code. The secret is stored encrypted and is ' +
    'not active until `/auth/mfa/enable` proves a code; calling setup again replaces a pending secret.',
  enable:
    'Verifies a code from the pending secret, turns MFA on and returns ten single-use backup codes, shown ' +
    'only here. Writes `auth.mfa_enabled`.',
  disable:
    'Needs a TOTP code or an unused backup code. Deletes the secret and every backup code. Writes ' +
    '`auth.mfa_disabled` with `metadata.factor`.',
  login:
    'Exchanges the `tempToken` from `/auth/login` (or the SSO hand-off) and a TOTP or unused backup code for a ' +
    'session. Writes `auth.login` with the first factor’s `metadata.method`, `metadata.mfa = true` and ' +
    '`metadata.mfaFactor` (`totp` or `backup_code`); a wrong code writes `auth.login_failed` with ' +
    '`metadata.reason = "invalid_mfa_code"`. The tempToken stays usable for its 5 minutes, always with a fresh code. ' +
    'After 10 wrong codes for one user within 15 minutes, from any address, further attempts get 429 ' +
    '`RATE_LIMIT_EXCEEDED` with `Retry-After`. The break-glass step of an owner of an organization that enforces ' +
    'SSO also writes `auth.sso_break_glass` (and `metadata.breakGlass = true` on `auth.login`) and mails every ' +
    'other owner; a tempToken of any other first factor into such an organization answers 403 `SSO_REQUIRED`.',
  generateBackupCodes:
    'Needs a TOTP code (not a backup code). Returns ten new codes; every earlier code, used or not, stops ' +
    'working. Writes `auth.backup_codes_generated`.',
  resend: 'Placeholder: TOTP codes come from the authenticator app and are never sent; returns a message.',
  securitySettings:
    'MFA state, unused backup codes, password age. Trusted devices are not implemented (always empty).',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const MFA_ERRORS = {
  setup: { 409: WRONG_STATE_ON },
  enable: {
    401: `${INVALID_CODE}; ${JWT_401}`,
    409: `${WRONG_STATE_ON}, or no pending secret (call /auth/mfa/setup first)`,
  },
  disable: CODE_WHILE_ON,
  login: {
    403: SSO_REQUIRED,
    429: 'RATE_LIMIT_EXCEEDED (the auth limiter per IP, or 10 wrong MFA codes for this user in 15 minutes)',
    401:
      `${INVALID_CODE}; UNAUTHORIZED (tempToken malformed, expired, issued before the last password change, ` +
      'or MFA was disabled since); ACCOUNT_DEACTIVATED (no active membership)',
  },
  generateBackupCodes: CODE_WHILE_ON,
} as const;
