import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ErrorCode, type ErrorCodeName } from './app-error.js';
import type { ErrorBody } from './error-body.js';
import { isScimPath, SCIM_MEDIA_TYPE, scimErrorBody } from './scim-error.js';

/** A request line longer than this, in a request whose head overflowed, is reported as a long URI (414). */
const LONG_REQUEST_LINE = 4096;
const METHOD = /^[A-Z]{3,10} /;

interface ParserError extends Error {
  code?: string;
  /** The bytes the parser was reading (a Buffer at run time). */
  rawPacket?: unknown;
}

/** What Node's parser refused, as status, code and message. Undefined: nothing to answer (the client left). */
export function classifyClientError(err: ParserError): [number, ErrorCodeName, string] | undefined {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, ErrorCode.REQUEST_TIMEOUT, 'The request was not received in time'];
    case 'HPE_HEADER_OVERFLOW':
      return longRequestLine(err.rawPacket)
        ? [414, ErrorCode.URI_TOO_LONG, 'The request URI is too long']
        : [431, ErrorCode.HEADERS_TOO_LARGE, 'The request headers are too large'];
    default:
      return [400, ErrorCode.VALIDATION_ERROR, 'Malformed HTTP request'];
  }
}

/** The path the refused packet's request line names, when it starts with a method (else undefined). */
export function requestPathOf(packet: unknown): string | undefined {
  if (!Buffer.isBuffer(packet)) return undefined;
  const head = packet.subarray(0, 64).toString('latin1');
  const match = /^[A-Z]{3,10} (\S+)/.exec(head);
  return match?.[1];
}

/** True when the packet starts a request whose first line (method, URI, version) is itself oversized. */
function longRequestLine(packet: unknown): boolean {
  if (!Buffer.isBuffer(packet)) return false;
  const head = packet.subarray(0, 16).toString('latin1');
  if (!METHOD.test(head)) return false;
  const end = packet.indexOf('\r\n');
  return end === -1 || end > LONG_REQUEST_LINE;
}

/**
 * Fastify's clientErrorHandler: requests Node's HTTP parser refuses never reach a route or a hook, so the answer
 * is written to the socket here, in the envelope with a request id and the security headers, like any other.
 */
export function createClientErrorHandler(securityHeaders: Readonly<Record<string, string>>) {
  return (err: ParserError, socket: Socket): void => {
    const answer = classifyClientError(err);
    const response = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (answer && socket.writable && !response?.headersSent) {
      const [status, code, message] = answer;
      // A SCIM client reads RFC 7644 errors, even from the HTTP parser.
      const scim = isScimPath(requestPathOf(err.rawPacket));
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
      // Closes once the answer is flushed: the parser cannot resume on this connection.
      socket.destroySoon();
      return;
    }
    socket.destroy();
  };
}
