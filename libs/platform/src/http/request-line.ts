import type { Socket } from 'node:net';

const CR = 0x0d;
const LF = 0x0a;
/** Bytes kept of a request line: enough for its method and the start of its path. */
const HEAD_BYTES = 64;

/** A request line as received so far: its length (without CRLF) and its first bytes (latin1). */
export interface RequestLine {
  length: number;
  head: string;
}

/** Leading empty lines before a request line are skipped (RFC 9112 §2.2), as the parser does. */
function lineStart(packet: Buffer, from: number): number {
  let i = from;
  while (i < packet.length && (packet[i] === CR || packet[i] === LF)) i += 1;
  return i;
}

/** `line` continued by `packet`: the request line and first bytes as they stand at the end of `packet`. */
function extend(line: RequestLine, packet: Buffer): RequestLine & { ended: boolean } {
  const start = line.length === 0 ? lineStart(packet, 0) : 0;
  const lf = packet.indexOf(LF, start);
  let end = lf === -1 ? packet.length : lf;
  if (lf !== -1 && end > start && packet[end - 1] === CR) end -= 1;
  const head =
    line.head.length < HEAD_BYTES
      ? line.head + packet.toString('latin1', start, Math.min(end, start + HEAD_BYTES - line.head.length))
      : line.head;
  return { length: line.length + (end - start), head, ended: lf !== -1 };
}

/** What RequestLines reads of Node's HTTP parser (internal to Node's HTTP server; checked before use). */
interface NodeParser {
  constructor: { kOnExecute?: unknown };
  getCurrentBuffer?: () => Buffer;
  [slot: number]: unknown;
}

interface LineState extends RequestLine {
  /** Its LF arrived: what follows is headers and body, until the next request. */
  ended: boolean;
}

/**
 * The request line of the request each connection is receiving, measured across TCP reads. Node's parser reports
 * an oversized head (HPE_HEADER_OVERFLOW) alike whether the URI or the headers overflowed, with only the read it
 * failed in; a long request line that arrived in several reads would look like long headers from that read alone.
 *
 * The reads are seen without a 'data' listener, which would take Node's parser off its native read path for the
 * connection's life: Node calls the parser's execute callback (`kOnExecute`) after each read it parsed natively,
 * and the parser hands out that read (`getCurrentBuffer`). Only while a request line is open is the read copied;
 * once its LF has arrived nothing is done until the request is answered (keep-alive). Where Node does not offer
 * those (another version, a connection read through JS), the refused read alone decides. The bytes of a request
 * pipelined behind one not yet answered are not measured.
 */
export class RequestLines {
  private readonly lines = new WeakMap<Socket, LineState>();

  /** Measures a connection's request lines, from its first. Call once Node's server has given it its parser. */
  track(socket: Socket): void {
    const parser = (socket as unknown as { parser?: NodeParser }).parser;
    const slot = parser?.constructor.kOnExecute;
    const execute = typeof slot === 'number' ? parser![slot] : undefined;
    if (!parser || typeof execute !== 'function' || typeof parser.getCurrentBuffer !== 'function') return;
    const state: LineState = { length: 0, head: '', ended: false };
    this.lines.set(socket, state);
    const read = parser.getCurrentBuffer.bind(parser);
    parser[slot as number] = function (this: unknown, ret: unknown, ...rest: unknown[]) {
      // A refused read (ret is the error) is added by `measure`, from the state before it.
      if (!state.ended && typeof ret === 'number') {
        const next = extend(state, read());
        state.length = next.length;
        state.head = next.head;
        state.ended = next.ended;
      }
      return (execute as (...args: unknown[]) => unknown).call(this, ret, ...rest);
    };
  }

  /** The connection's request was answered: what it receives next starts a new request line. */
  rearm(socket: Socket): void {
    const state = this.lines.get(socket);
    if (!state?.ended) return;
    state.length = 0;
    state.head = '';
    state.ended = false;
  }

  /** The request line as it stands once `packet`, the read the parser failed in, is added to what came before. */
  measure(socket: Socket | undefined, packet: Buffer): RequestLine {
    const state = socket && this.lines.get(socket);
    if (state?.ended) return { length: state.length, head: state.head };
    const { length, head } = extend(state ?? { length: 0, head: '' }, packet);
    return { length, head };
  }
}

/** The request line a single read shows, for a parser error on a connection that was not measured. */
export function requestLineIn(packet: Buffer): RequestLine {
  const { length, head } = extend({ length: 0, head: '' }, packet);
  return { length, head };
}
