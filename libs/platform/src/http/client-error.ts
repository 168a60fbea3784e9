import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ErrorCode, type ErrorCodeName } from './app-error.js';
import type { ErrorBody } from './error-body.js';
import type { LingeringClose } from './lingering-close.js';
import { type RequestLine, requestLineIn, type RequestLines } from './request-line.js';
import { isScimPath, SCIM_MEDIA_TYPE, scimErrorBody } from './scim-error.js';

/** A request line longer than this, in a request whose head overflowed, is reported as a long URI (414). */
const LONG_REQUEST_LINE = 4096;
const METHOD = /^[A-Z]{3,10} /;

interface ParserError extends Error {
  code?: string;
  /** The bytes the parser was reading (a Buffer at run time). */
  rawPacket?: unknown;
}

/**
 * What Node's parser refused, as status, code and message. Undefined: nothing to answer (the client left).
 * `line` is the request line as received up to the refused read (by default, what that read alone shows).
 */
export function classifyClientError(
  err: ParserError,
  line: RequestLine | undefined = Buffer.isBuffer(err.rawPacket) ? requestLineIn(err.rawPacket) : undefined,
): [number, ErrorCodeName, string] | undefined {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, ErrorCode.REQUEST_TIMEOUT, 'The request was not received in time'];
    case 'HPE_HEADER_OVERFLOW':
      return line && METHOD.test(line.head) && line.length > LONG_REQUEST_LINE
        ? [414, ErrorCode.URI_TOO_LONG, 'The request URI is too long']
        : [431, ErrorCode.HEADERS_TOO_LARGE, 'The request headers are too large'];
    default:
      return [400, ErrorCode.VALIDATION_ERROR, 'Malformed HTTP request'];
  }
}

/** The path a request line names, when it starts with a method (else undefined). */
export function requestPathOf(line: RequestLine | undefined): string | undefined {
  const match = /^[A-Z]{3,10} (\S+)/.exec(line?.head ?? '');
  return match?.[1];
}

/** What the handler needs of the connection: its request line so far, and how to close it. */
export interface ClientErrorConnections {
  requestLines: RequestLines;
  closer: LingeringClose;
  /** Told of each answer written (the refusal count: these requests reach no hook). */
  answered?: (status: number, code: ErrorCodeName) => void;
}

/**
 * Fastify's clientErrorHandler: requests Node's HTTP parser refuses never reach a route or a hook, so the answer
 * is written to the socket here, in the envelope with a request id and the security headers, like any other.
 */
export function createClientErrorHandler(
  securityHeaders: Readonly<Record<string, string>>,
  connections: ClientErrorConnections,
) {
  return (err: ParserError, socket: Socket): void => {
    // Closing already: the parser was detached from the rest of the request (its end, a late timeout).
    if (connections.closer.isLingering(socket)) return;
    const line = Buffer.isBuffer(err.rawPacket)
      ? connections.requestLines.measure(socket, err.rawPacket)
      : undefined;
    const answer = classifyClientError(err, line);
    const response = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (answer && socket.writable && !response?.headersSent) {
      const [status, code, message] = answer;
      // A SCIM client reads RFC 7644 errors, even from the HTTP parser.
      const scim = isScimPath(requestPathOf(line));
      const body: ErrorBody | Record<string, unknown> = scim
        ? scimErrorBody(status, undefined, message)
        : { success: false, error: message, code };
      const json = JSON.stringify(body);
      const headers: Record<string, string> = {
        ...securityHeaders,
        'X-Request-Id': randomUUID(),
        'Content-Type': scim ? SCIM_MEDIA_TYPE : 'application/json; charset=utf-8',
        'Content-Length': String(Buffer.byteLength(json)),
        Connection: 'close',
      };
      const head = Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${json}`);
      connections.answered?.(status, code);
      // The parser cannot resume on this connection; the rest of what the client sends is drained, not reset.
      connections.closer.close(socket);
      return;
    }
    socket.destroy();
  };
}
