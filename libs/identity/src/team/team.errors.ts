import { AppError, ErrorCode, moduleErrorCodes } from '#platform';

/** Error codes of the team routes, beside the generic ones in the platform. */
export const TeamErrorCode = moduleErrorCodes({
  INVITE_ALREADY_USED: 'INVITE_ALREADY_USED',
  INVITE_EXPIRED: 'INVITE_EXPIRED',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof TeamErrorCode)[keyof typeof TeamErrorCode], true> {}
}

/**
 * Reported as VALIDATION_ERROR with `reason: "ALREADY_MEMBER"` (docs/identity-administrators.md, "Teams";
 * test/invitations.e2e-spec.ts).
 */
export const ALREADY_MEMBER = 'ALREADY_MEMBER';

export function alreadyMember(message: string): AppError {
  return new AppError(400, ErrorCode.VALIDATION_ERROR, message, { extra: { reason: ALREADY_MEMBER } });
}

export function lastActiveOwner(): AppError {
  return AppError.validation('The organization must keep at least one active owner');
}

export function onlyOwnerTouchesOwners(): AppError {
  return AppError.forbidden('Only an owner may grant the owner role or change an owner');
}

export function inviteAlreadyUsed(): AppError {
  return new AppError(400, TeamErrorCode.INVITE_ALREADY_USED, 'This invitation has already been accepted');
}

export function inviteExpired(): AppError {
  return new AppError(400, TeamErrorCode.INVITE_EXPIRED, 'This invitation has expired; ask for a new one');
}
