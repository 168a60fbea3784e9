import { AppError, moduleErrorCodes } from '#platform';

/**
 * Error codes of integrations, beside the generic ones in the platform (docs/compliance-officers.md, "Integrations").
 */
export const IntegrationErrorCode = moduleErrorCodes({
  /** A recipient's confirmation token that is unknown, already used or expired (one answer for all three). */
  INVALID_TOKEN: 'INVALID_TOKEN',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<
    (typeof IntegrationErrorCode)[keyof typeof IntegrationErrorCode],
    true
  > {}
}

export function invalidConfirmationToken(): AppError {
  return new AppError(
    400,
    IntegrationErrorCode.INVALID_TOKEN,
    'This confirmation link is invalid, expired or already used',
  );
}
