import { AsyncLocalStorage } from 'node:async_hooks';
import pino from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { activeLogTraceFields, tracingEnabled } from '../tracing/tracing.js';
import { redactUrl } from './url-redaction.js';
import { PROBE_PATHS } from '../system/probe-paths.js';

export { redactUrl };

const SECRET_FIELDS = [
  'password',
  'currentPassword',
  'newPassword',
  'token',
  'tempToken',
  'secret',
  'apiKey',
  'clientSecret',
  'backupCodes',
  'secretEncrypted',
  'jwtSecret',
];

/**
 * Fields that hold secrets wherever they appear (at the top of a line and one level down: `*.password` matches `body.password`). Names that
 * are also ordinary fields, `code` (an error code, a SQLSTATE) and `key`, are redacted only inside request-shaped
 * objects, where they would be an MFA code or a key: an error's `code` stays readable.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`]),
  ...['body', 'dto', 'input', 'query'].flatMap((at) => [`${at}.code`, `${at}.key`]),
];

/** The request being served in this async context, whose id every log line written for it carries. */
export const requestContext = new AsyncLocalStorage<string>();

/** `reqId` on the lines written while a request is being served. */
function requestMixin(): object {
  const reqId = requestContext.getStore();
  return reqId === undefined ? {} : { reqId };
}

/** With tracing on, also the active span's `trace_id` and `span_id` (and `trace_flags`), to find a line's trace. */
function tracedMixin(): object {
  const fields = activeLogTraceFields();
  return fields === undefined ? requestMixin() : { ...requestMixin(), ...fields };
}

/**
 * The process's root logger: JSON lines at `logLevel`, secrets redacted (REDACT_PATHS), errors serialized with
 * their stack, and `reqId` on every line written while a request is being served (`requestContext`, entered by
 * the HTTP hooks); when the process traces, the ids of the span a line is written in (docs/operators.md, "Tracing
 * the service"). No child logger is made per request: a request that logs nothing costs nothing here.
 */
export function createRootLogger(
  config: Pick<AppConfig, 'logLevel'>,
  destination?: pino.DestinationStream,
): pino.Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
    serializers: { err: pino.stdSerializers.err },
    // Chosen once: without tracing, a line pays nothing for it.
    mixin: tracingEnabled() ? tracedMixin : requestMixin,
  };
  return destination ? pino(options, destination) : pino(options);
}

const NO_COMPLETION_LINE = PROBE_PATHS;

/** The level of a request's completion line: error for 5xx, warn for 4xx, info otherwise. */
function completionLevel(statusCode: number): 'error' | 'warn' | 'info' {
  return statusCode >= 500 ? 'error' : statusCode >= 400 ? 'warn' : 'info';
}

type LoggedRequest = {
  id: string;
  method: string;
  url: string;
  ip: string;
  headers: Record<string, unknown>;
};

/** What a request's line says of it: never its headers or body. */
function requestFields(request: LoggedRequest) {
  return {
    id: request.id,
    method: request.method,
    url: redactUrl(request.url),
    remoteAddress: request.ip,
    userAgent: request.headers['user-agent'],
  };
}

/**
 * Writes a request's completion line (method, URL with its secrets masked, client address, user agent, status,
 * time taken), unless its level is disabled or the request is a health check. Headers and bodies are never logged.
 */
export function logRequestCompleted(
  logger: pino.Logger,
  request: LoggedRequest,
  statusCode: number,
  responseTimeMs: number,
): void {
  const level = completionLevel(statusCode);
  if (!logger.isLevelEnabled(level) || NO_COMPLETION_LINE.has(request.url)) return;
  logger[level](
    {
      reqId: request.id,
      req: requestFields(request),
      res: { statusCode },
      responseTime: Math.round(responseTimeMs),
    },
    'request completed',
  );
}

/**
 * A request whose client went away before its answer was complete (an event stream closed by its reader ends this
 * way): one info line instead of the completion line, which never comes.
 */
export function logRequestAborted(logger: pino.Logger, request: LoggedRequest): void {
  if (!logger.isLevelEnabled('info') || NO_COMPLETION_LINE.has(request.url)) return;
  logger.info({ reqId: request.id, req: requestFields(request) }, 'request aborted by the client');
}
