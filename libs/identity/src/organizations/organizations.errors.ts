import { AppError, moduleErrorCodes } from '#platform';

/**
 * Error codes of organization deletion (docs/compliance-officers.md, "Organization deletion"), beside the generic
 * ones in the platform.
 */
export const OrganizationErrorCode = moduleErrorCodes({
  /** Login of a user whose every active membership is in a deleted organization (awaiting erasure). */
  ORGANIZATION_DELETED: 'ORGANIZATION_DELETED',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<
    (typeof OrganizationErrorCode)[keyof typeof OrganizationErrorCode],
    true
  > {}
}

export function organizationDeleted(): AppError {
  return new AppError(
    401,
    OrganizationErrorCode.ORGANIZATION_DELETED,
    'The organization of this account has been deleted; ask its owner or the operator to restore it',
  );
}
