import { AppError, moduleErrorCodes } from '#platform';

/** Error codes of the MFA routes, beside the generic ones in the platform. */
export const MfaErrorCode = moduleErrorCodes({
  INVALID_MFA_CODE: 'INVALID_MFA_CODE',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof MfaErrorCode)[keyof typeof MfaErrorCode], true> {}
}

/** A wrong, malformed or already used TOTP code, or a backup code that is unknown or used. */
export function invalidMfaCode(): AppError {
  return AppError.unauthorized('Invalid or already used MFA code', MfaErrorCode.INVALID_MFA_CODE);
}

/** A tempToken that is malformed, expired, of another purpose, or whose user no longer has MFA on. */
export function invalidTempToken(): AppError {
  return AppError.unauthorized('Invalid or expired MFA login token; log in again');
}

export function mfaAlreadyEnabled(): AppError {
  return AppError.conflict('Multi-factor authentication is already enabled');
}

export function mfaNotEnabled(): AppError {
  return AppError.conflict('Multi-factor authentication is not enabled');
}

export function mfaSetupNotStarted(): AppError {
  return AppError.conflict('No pending MFA secret: call /auth/mfa/setup first');
}
