import { AppError, ErrorCode } from './app-error.js';

/** The SCIM root: `/scim/v2`, outside `/api` (docs/identity-administrators.md, "SCIM provisioning"). */
export const SCIM_PREFIX = '/scim/v2';
export const SCIM_MEDIA_TYPE = 'application/scim+json; charset=utf-8';
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** RFC 7644 §3.12 scimType values this service answers. */
export type ScimType =
  'invalidValue' | 'invalidFilter' | 'uniqueness' | 'invalidSyntax' | 'mutability' | 'noTarget';

export const isScimPath = (url: string | undefined): boolean =>
  url !== undefined &&
  (url === SCIM_PREFIX || url.startsWith(`${SCIM_PREFIX}/`) || url.startsWith(`${SCIM_PREFIX}?`));

/** A SCIM refusal: an AppError whose body, on a SCIM route, carries `scimType`. */
export function scimError(status: number, scimType: ScimType | undefined, detail: string): AppError {
  const code =
    status === 409 ? ErrorCode.CONFLICT : status === 404 ? ErrorCode.NOT_FOUND : ErrorCode.VALIDATION_ERROR;
  return new AppError(status, code, detail, scimType ? { extra: { scimType } } : {});
}

/** The RFC 7644 error body: `{schemas, status, scimType?, detail}`; status is a string. */
export function scimErrorBody(status: number, err: unknown, detail: string): Record<string, unknown> {
  const scimType =
    err instanceof AppError && typeof err.extra?.scimType === 'string'
      ? err.extra.scimType
      : status === 400 && err instanceof AppError && err.code === ErrorCode.VALIDATION_ERROR
        ? 'invalidSyntax'
        : undefined;
  return {
    schemas: [SCIM_ERROR_SCHEMA],
    status: String(status),
    ...(scimType ? { scimType } : {}),
    detail,
  };
}
