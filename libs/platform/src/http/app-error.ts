/** Error codes shared by every module. Modules add their own codes next to their services. */
export const ErrorCode = {
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  UNAUTHORIZED: 'UNAUTHORIZED',
  INVALID_CREDENTIALS: 'INVALID_CREDENTIALS',
  SESSION_REVOKED: 'SESSION_REVOKED',
  TOKEN_EXPIRED: 'TOKEN_EXPIRED',
  ACCOUNT_DEACTIVATED: 'ACCOUNT_DEACTIVATED',
  /** A session scoped to one organization (its SSO) asked for an account-wide change: sign in with the account's own factor. */
  REAUTHENTICATION_REQUIRED: 'REAUTHENTICATION_REQUIRED',
  FORBIDDEN: 'FORBIDDEN',
  UPGRADE_REQUIRED: 'UPGRADE_REQUIRED',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  CONFLICT: 'CONFLICT',
  EMAIL_IN_USE: 'EMAIL_IN_USE',
  GONE: 'GONE',
  URI_TOO_LONG: 'URI_TOO_LONG',
  HEADERS_TOO_LARGE: 'HEADERS_TOO_LARGE',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  VERSION_SUNSET: 'VERSION_SUNSET',
  VERSION_UNSUPPORTED: 'VERSION_UNSUPPORTED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMIT_EXCEEDED: 'RATE_LIMIT_EXCEEDED',
  /** A per-user limiter (CPI reads) refused the request; the auth limiter's code is RATE_LIMIT_EXCEEDED. */
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
} as const;

/**
 * The codes of the modules above the platform. Each module that has codes of its own declares them in its
 * `<module>.errors.ts` through `moduleErrorCodes` (which records them at run time) and adds them here by
 * augmentation, for the type (the platform imports nothing from above):
 *
 *   export const TeamErrorCode = moduleErrorCodes({ LAST_OWNER: 'LAST_OWNER' });
 *   declare module '#platform' {
 *     interface ModuleErrorCodes extends Record<(typeof TeamErrorCode)[keyof typeof TeamErrorCode], true> {}
 *   }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ModuleErrorCodes {}

/** Every code an AppError may carry: a closed union, so a misspelt code does not compile. */
export type ErrorCodeName = (typeof ErrorCode)[keyof typeof ErrorCode] | keyof ModuleErrorCodes;

const declaredModuleCodes = new Set<string>();

/**
 * Declares a module's error codes: returns the object as given, and records its codes so that `knownErrorCodes`
 * lists them (the API document's closed `ErrorCode` enum, which the typed client's union is generated from).
 */
export function moduleErrorCodes<const T extends Record<string, string>>(codes: T): T {
  for (const code of Object.values(codes)) declaredModuleCodes.add(code);
  return codes;
}

/**
 * Every code an error envelope may carry, `ErrorCodeName` at run time, sorted: the platform's and those of every
 * module loaded so far (an application has loaded them all once its module graph is imported).
 */
export function knownErrorCodes(): string[] {
  return [...new Set<string>([...Object.values(ErrorCode), ...declaredModuleCodes])].sort();
}

export interface ErrorDetail {
  field: string;
  message: string;
}

export interface AppErrorOptions {
  details?: ErrorDetail[];
  /** Extra top-level fields of the error body (for example `reason`, `supportedVersions`). */
  extra?: Record<string, unknown>;
  /** Response headers that belong to this error (Retry-After, Link). */
  headers?: Record<string, string>;
  cause?: unknown;
  /**
   * A 5xx is logged as an error unless this is false: for an answer that reports the state of something else as
   * asked (a health probe that finds the database down, a drain), not a failure of the request.
   */
  logged?: boolean;
}

/** The one typed application error: an HTTP status and a stable code. The global filter renders it. */
export class AppError extends Error {
  readonly details?: ErrorDetail[];
  readonly extra?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
  /** Whether the exception filter logs it when it is a 5xx (AppErrorOptions.logged). */
  readonly logged: boolean;

  constructor(
    readonly status: number,
    readonly code: ErrorCodeName,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.details = options.details;
    this.extra = options.extra;
    this.headers = options.headers;
    this.logged = options.logged ?? true;
  }

  static validation(message: string, details?: ErrorDetail[]): AppError {
    return new AppError(400, ErrorCode.VALIDATION_ERROR, message, { details });
  }

  static notFound(what = 'Resource'): AppError {
    return new AppError(404, ErrorCode.NOT_FOUND, `${what} not found`);
  }

  static unauthorized(
    message = 'Authentication required',
    code: ErrorCodeName = ErrorCode.UNAUTHORIZED,
  ): AppError {
    return new AppError(401, code, message);
  }

  static forbidden(message = 'You do not have permission to perform this action'): AppError {
    return new AppError(403, ErrorCode.FORBIDDEN, message);
  }

  static conflict(message: string, code: ErrorCodeName = ErrorCode.CONFLICT): AppError {
    return new AppError(409, code, message);
  }
}
