import { AppError } from '#platform';

/** Error codes of the auth routes, beside the generic ones in the platform. */
export const AuthErrorCode = {
  INVALID_TOKEN: 'INVALID_TOKEN',
} as const;

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof AuthErrorCode)[keyof typeof AuthErrorCode], true> {}
}

/** A sign-up, reset or magic-link token that is unknown, expired or already used (one answer for all three). */
export function invalidToken(): AppError {
  return new AppError(400, AuthErrorCode.INVALID_TOKEN, 'This link is invalid, expired or already used');
}
