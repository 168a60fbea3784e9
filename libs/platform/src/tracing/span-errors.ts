import { type Exception, type Span, SpanStatusCode } from '@opentelemetry/api';

/**
 * What a span records of a failure: the error's code or name, never its message or stack. Messages carry what the
 * failing call was given (a mail server's rejection names its recipients, a database error quotes a value, a
 * parser's the body it choked on), and spans leave the service for a tracing backend. The service's own spans
 * (`recordSpanError`) and those of its instrumentations (`withholdErrorDetails`, apps/api/src/tracing.ts) follow it.
 * Only `@opentelemetry/api` is imported: the process's entry loads this before the application.
 */

/** The message a span shows where an error's own would be. */
export const WITHHELD_MESSAGE = '[Redacted]';

/** A code or a name is an identifier (EENVELOPE, 23505, NOT_FOUND, TypeError); anything else is not recorded. */
const IDENTIFIER = /^[A-Za-z0-9_.:-]{1,64}$/;

/** The class of a failure as a span names it: the error's code, else its name, else `Error`. */
export function spanErrorType(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const { code, name } = err as { code?: unknown; name?: unknown };
    if ((typeof code === 'string' || typeof code === 'number') && IDENTIFIER.test(String(code)))
      return String(code);
    if (typeof name === 'string' && IDENTIFIER.test(name)) return name;
  }
  return 'Error';
}

/** The exception event of a failure: its class and the withheld message, no stack. */
function withheldException(err: unknown): Exception {
  return { name: spanErrorType(err), message: WITHHELD_MESSAGE };
}

/** Marks a span failed: `error.type`, an exception event and the status name the failure's class alone. */
export function recordSpanError(span: Span, err: unknown): void {
  const type = spanErrorType(err);
  span.setAttribute('error.type', type);
  span.recordException(withheldException(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: type });
}

/**
 * Makes a span that an instrumentation records failures on (the HTTP server, Fastify, pg, ioredis, each of which
 * writes the error's message into the status and its message and stack into an exception event) record them as
 * `recordSpanError` does: its status keeps its code with the withheld message, its exception events the class.
 */
export function withholdErrorDetails(span: Span): void {
  const setStatus = span.setStatus.bind(span);
  const recordException = span.recordException.bind(span);
  span.setStatus = (status) =>
    setStatus(status.message === undefined ? status : { code: status.code, message: WITHHELD_MESSAGE });
  span.recordException = (exception, time) => recordException(withheldException(exception), time);
}
