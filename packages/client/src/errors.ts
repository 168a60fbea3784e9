import type { Schemas } from './types.js';

/** The service's error codes, generic and per module, as its error registry lists them. */
const KNOWN_CODES = [
  // Generic codes
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'INVALID_CREDENTIALS',
  'SESSION_REVOKED',
  'TOKEN_EXPIRED',
  'ACCOUNT_DEACTIVATED',
  'REAUTHENTICATION_REQUIRED',
  'FORBIDDEN',
  'UPGRADE_REQUIRED',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'EMAIL_IN_USE',
  'GONE',
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'VERSION_SUNSET',
  'VERSION_UNSUPPORTED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMIT_EXCEEDED',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
  // Identity
  'INVALID_TOKEN',
  'SSO_REQUIRED',
  'INVITE_ALREADY_USED',
  'INVITE_EXPIRED',
  'INVALID_MFA_CODE',
  'ORGANIZATION_DELETED',
  'SSO_DOMAIN_TAKEN',
  'DOMAIN_NOT_VERIFIED',
  'SAML_MESSAGE_INVALID',
  // Governance
  'SVC_BLOCKED_BY_POLICY',
  'SVC_DUPLICATE_REQUEST',
  'ALREADY_DECIDED',
  'ALREADY_ESCALATED',
  'AUDIT_CHAIN_INVALID',
  'WEBHOOK_URL_NOT_ALLOWED',
  'WEBHOOK_DISABLED',
  'PATTERN_STATE_CONFLICT',
  'TRACE_ERASED',
  'SUBJECT_ON_HOLD',
  // Compliance
  'SEND_FAILED',
  'FRIA_TRANSITION_FAILED',
  'FRIA_LIST_FAILED',
  'FRIA_CREATE_FAILED',
  'FRIA_GET_FAILED',
  'FRIA_UPDATE_FAILED',
  'FRIA_DELETE_FAILED',
] as const;

type DocumentedErrorCode = Schemas['ErrorEnvelopeDto'] extends { code: infer Code } ? Code : string;

/**
 * The service's error codes (the envelope's `code`): the OpenAPI document's enum when it declares one, else the list
 * above.
 */
export type ServiceErrorCode = string extends DocumentedErrorCode
  ? (typeof KNOWN_CODES)[number]
  : Extract<DocumentedErrorCode, string>;

/**
 * The client's own code, for an answer that carries no code of the service's and whose status has no generic code
 * (a proxy's 418, a 402, an unexpected 3xx): `status` says what it was, `rawCode` what the body said, if anything.
 */
export type UnknownErrorCode = 'HTTP_ERROR';

/**
 * The closed union of `GovernanceError.code`: the service's codes (`ServiceErrorCode`, the document's enum) and the
 * client's `HTTP_ERROR`.
 */
export type ErrorCode = ServiceErrorCode | UnknownErrorCode;

/**
 * The service's error codes, at run time (typed: a code the document's enum lacks does not compile). `HTTP_ERROR`,
 * the client's own, is not among them.
 */
export const ERROR_CODES: readonly ServiceErrorCode[] = KNOWN_CODES;

const SERVICE_CODES: ReadonlySet<string> = new Set<string>(ERROR_CODES);

/** Whether `code` is one of the service's codes this client knows (`ERROR_CODES`). */
export function isServiceErrorCode(code: string): code is ServiceErrorCode {
  return SERVICE_CODES.has(code);
}

/** One invalid field of a 400 `VALIDATION_ERROR`. */
export interface ErrorDetail {
  field: string;
  message: string;
}

/** What the service answered, kept on the error for the fields this class does not lift. */
export type ErrorBody = Record<string, unknown>;

/**
 * A failed call: the envelope `{success: false, error, code, details?}` (or, under `/scim/v2`, an RFC 7644 error),
 * with the status and the request id the service logged it under.
 */
export class GovernanceError extends Error {
  override readonly name = 'GovernanceError';
  /** The HTTP status. */
  readonly status: number;
  /**
   * The stable machine-readable code, always one of `ErrorCode`. SCIM errors, answers that are not an envelope and
   * envelopes whose code this client does not know (a newer service's) get the generic code of their status (see
   * `codeOfStatus`); the code as sent is in `rawCode`.
   */
  readonly code: ErrorCode;
  /**
   * The envelope's `code` exactly as the service sent it, known or not (a newer service may send a code this client's
   * `ErrorCode` lacks); undefined when the answer carried none.
   */
  readonly rawCode: string | undefined;
  /** The invalid fields of a `VALIDATION_ERROR` (at most 20; `detailsTotal` says how many there were). */
  readonly details: ErrorDetail[];
  /** How many invalid fields there were, when the service listed only the first 20. */
  readonly detailsTotal: number | undefined;
  /** `X-Request-Id` of the answer (or the body's `requestId`): quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** Seconds to wait before trying again, from `Retry-After` (429, 503). */
  readonly retryAfterSeconds: number | undefined;
  /** The `scimType` of an RFC 7644 error (`uniqueness`, `invalidFilter`, …). */
  readonly scimType: string | undefined;
  /** The parsed body, or its text when it was not JSON. */
  readonly body: ErrorBody | string | undefined;

  constructor(init: {
    status: number;
    code: ErrorCode;
    rawCode?: string;
    message: string;
    details?: ErrorDetail[];
    detailsTotal?: number;
    requestId?: string;
    retryAfterSeconds?: number;
    scimType?: string;
    body?: ErrorBody | string;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.rawCode = init.rawCode;
    this.details = init.details ?? [];
    this.detailsTotal = init.detailsTotal;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.scimType = init.scimType;
    this.body = init.body;
  }

  /** The `data` member an error envelope may carry (the first trace's `id` of `SVC_DUPLICATE_REQUEST`). */
  get data(): unknown {
    return typeof this.body === 'object' ? this.body.data : undefined;
  }

  /** The error for a response that is not a success, from its parsed (or textual) body. */
  static from(response: Response, body: unknown): GovernanceError {
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const retryAfterSeconds = retryAfterSecondsOf(response.headers.get('retry-after'));
    const status = response.status;
    if (isRecord(body) && body.success === false && typeof body.code === 'string') {
      return new GovernanceError({
        status,
        // A code this client does not know (a newer service's) is not passed off as one it does.
        code: isServiceErrorCode(body.code) ? body.code : codeOfStatus(status),
        rawCode: body.code,
        message: typeof body.error === 'string' ? body.error : `HTTP ${status}`,
        details: Array.isArray(body.details) ? body.details.filter(isDetail) : [],
        detailsTotal: typeof body.detailsTotal === 'number' ? body.detailsTotal : undefined,
        requestId: requestId ?? (typeof body.requestId === 'string' ? body.requestId : undefined),
        retryAfterSeconds,
        body,
      });
    }
    if (isRecord(body) && Array.isArray(body.schemas)) {
      return new GovernanceError({
        status,
        code: codeOfStatus(status),
        message: typeof body.detail === 'string' ? body.detail : `HTTP ${status}`,
        requestId,
        retryAfterSeconds,
        scimType: typeof body.scimType === 'string' ? body.scimType : undefined,
        body,
      });
    }
    return new GovernanceError({
      status,
      code: codeOfStatus(status),
      message: `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ''}`,
      requestId,
      retryAfterSeconds,
      body: isRecord(body) ? body : typeof body === 'string' ? body : undefined,
    });
  }
}

/** Whether an error is a `GovernanceError`, optionally with one of these codes. */
export function isGovernanceError(error: unknown, ...codes: ErrorCode[]): error is GovernanceError {
  return error instanceof GovernanceError && (codes.length === 0 || codes.includes(error.code));
}

/** The generic code of each status that has one. */
const CODE_OF_STATUS: Readonly<Record<number, ServiceErrorCode>> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  410: 'GONE',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  // Unprocessable content: the request's content was refused, which is what VALIDATION_ERROR says.
  422: 'VALIDATION_ERROR',
  429: 'RATE_LIMIT_EXCEEDED',
  431: 'HEADERS_TOO_LARGE',
  500: 'INTERNAL_ERROR',
  // A gateway that got no (timely) answer: the service is not reachable, which is what SERVICE_UNAVAILABLE says.
  502: 'SERVICE_UNAVAILABLE',
  503: 'SERVICE_UNAVAILABLE',
  504: 'SERVICE_UNAVAILABLE',
};

/**
 * The generic code of a status, for answers that carry no code this client knows (SCIM errors, a proxy's page, a
 * newer service's code): the table above, `INTERNAL_ERROR` for another 5xx, and `HTTP_ERROR` for any other status
 * (a 402, 418, 451…: no code of the service's says what it means).
 */
export function codeOfStatus(status: number): ErrorCode {
  const code = CODE_OF_STATUS[status];
  if (code !== undefined) return code;
  if (status >= 500 && status <= 599) return 'INTERNAL_ERROR';
  return 'HTTP_ERROR';
}

/** `Retry-After` as seconds: a number of seconds, or an HTTP date (relative to `now`). */
export function retryAfterSecondsOf(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isDetail(value: unknown): value is ErrorDetail {
  return isRecord(value) && typeof value.field === 'string' && typeof value.message === 'string';
}
