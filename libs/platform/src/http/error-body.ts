import { HttpException } from '@nestjs/common';
import { AppError, ErrorCode, type ErrorCodeName } from './app-error.js';
import { isDatabaseUnavailable } from '../db/database-errors.js';

export interface ErrorBody {
  success: false;
  error: string;
  code: ErrorCodeName;
  details?: { field: string; message: string }[];
  /** How many details there were, when more than MAX_ERROR_DETAILS were found and only those are listed. */
  detailsTotal?: number;
  requestId?: string;
  [extra: string]: unknown;
}

export interface RenderedError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** True when the failure is ours (5xx): it is logged with its stack. */
  unexpected: boolean;
}

const STATUS_CODES: Record<number, ErrorCodeName> = {
  400: ErrorCode.VALIDATION_ERROR,
  401: ErrorCode.UNAUTHORIZED,
  403: ErrorCode.FORBIDDEN,
  404: ErrorCode.NOT_FOUND,
  405: ErrorCode.METHOD_NOT_ALLOWED,
  408: ErrorCode.REQUEST_TIMEOUT,
  409: ErrorCode.CONFLICT,
  410: ErrorCode.GONE,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  414: ErrorCode.URI_TOO_LONG,
  431: ErrorCode.HEADERS_TOO_LARGE,
  415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
  429: ErrorCode.RATE_LIMIT_EXCEEDED,
  503: ErrorCode.SERVICE_UNAVAILABLE,
};

const SAFE_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'Malformed JSON in request body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Request body is empty but Content-Type is application/json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Request body size did not match Content-Length',
};

/** An error lists at most this many details; `detailsTotal` then says how many were found. */
export const MAX_ERROR_DETAILS = 20;

/**
 * Turns anything thrown into the envelope's error body. Known errors keep their status and code; errors
 * raised by Fastify while reading the request (bad JSON, too large) keep their 4xx status under our codes; the
 * database unable to serve now (too many connections, a deadlock, a timeout: `isDatabaseUnavailable`) is a 503 with
 * Retry-After; everything else is a 500 whose body carries only the request id.
 */
export function renderError(err: unknown, requestId?: string): RenderedError {
  if (err instanceof AppError) {
    const body: ErrorBody = { success: false, error: err.message, code: err.code };
    if (err.details?.length) {
      body.details = err.details.slice(0, MAX_ERROR_DETAILS);
      if (err.details.length > MAX_ERROR_DETAILS) body.detailsTotal = err.details.length;
    }
    if (err.extra) Object.assign(body, err.extra);
    return {
      status: err.status,
      body,
      headers: err.headers ?? {},
      unexpected: err.status >= 500 && err.logged,
    };
  }
  if (err instanceof HttpException) {
    const status = err.getStatus();
    const code =
      STATUS_CODES[status] ?? (status >= 500 ? ErrorCode.INTERNAL_ERROR : ErrorCode.VALIDATION_ERROR);
    const message = status >= 500 ? 'Internal server error' : httpExceptionMessage(err);
    const body: ErrorBody = { success: false, error: message, code };
    if (status >= 500 && requestId) body.requestId = requestId;
    return { status, body, headers: {}, unexpected: status >= 500 };
  }
  const fastifyStatus = fastifyClientErrorStatus(err);
  if (fastifyStatus) {
    const fcode = (err as { code?: string }).code ?? '';
    const body: ErrorBody = {
      success: false,
      error: SAFE_MESSAGES[fcode] ?? 'Bad request',
      code: STATUS_CODES[fastifyStatus] ?? ErrorCode.VALIDATION_ERROR,
    };
    return { status: fastifyStatus, body, headers: {}, unexpected: false };
  }
  if (isDatabaseUnavailable(err)) {
    // Too many connections, a deadlock, a statement timeout, a server restarting: the request may be retried as it
    // is. Still logged: an operator should see it.
    const body: ErrorBody = {
      success: false,
      error: 'The database cannot serve the request now; retry shortly',
      code: ErrorCode.SERVICE_UNAVAILABLE,
    };
    if (requestId) body.requestId = requestId;
    return { status: 503, body, headers: { 'Retry-After': '1' }, unexpected: true };
  }
  const body: ErrorBody = { success: false, error: 'Internal server error', code: ErrorCode.INTERNAL_ERROR };
  if (requestId) body.requestId = requestId;
  return { status: 500, body, headers: {}, unexpected: true };
}

function httpExceptionMessage(err: HttpException): string {
  const response = err.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return err.message;
}

/** Client errors that Fastify raises before a handler runs carry `statusCode` 4xx and an FST_ code. */
function fastifyClientErrorStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { statusCode, code } = err as { statusCode?: unknown; code?: unknown };
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode >= 500) return undefined;
  if (typeof code === 'string' && code.startsWith('FST_')) return statusCode;
  // The client closed the connection while its body was being read: nobody is left to answer, nothing is ours.
  if (code === 'ECONNRESET' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE')
    return statusCode;
  // Errors from the JSON parser (SyntaxError with statusCode 400) and body-limit checks.
  if (err instanceof SyntaxError) return statusCode;
  return undefined;
}
