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

interface LineState extends RequestLine {
  /** Its LF arrived: what follows is headers and body, until the next request. */
  ended: boolean;
  tap: (chunk: Buffer) => void;
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

/**
 * The request line of the request each connection is receiving, measured across TCP reads. Node's parser reports
 * an oversized head (HPE_HEADER_OVERFLOW) alike whether the URI or the headers overflowed, with only the read it
 * failed in; a long request line that arrived in several reads would look like long headers from that read alone.
 * A connection is read until its request line ends, then again once its request is answered (keep-alive); the
 * bytes of a request pipelined behind one not yet answered are not measured (its refusal is judged on its read).
 */
export class RequestLines {
  private readonly lines = new WeakMap<Socket, LineState>();

  /** Measures a new connection's first request line. */
  track(socket: Socket): void {
    const state: LineState = {
      length: 0,
      head: '',
      ended: false,
      tap: (chunk) => {
        const next = extend(state, chunk);
        state.length = next.length;
        state.head = next.head;
        if (next.ended) {
          state.ended = true;
          socket.removeListener('data', state.tap);
        }
      },
    };
    this.lines.set(socket, state);
    // After the HTTP server's own listener: a read the parser refuses is measured from the state before it.
    socket.on('data', state.tap);
  }

  /** The connection's request was answered: what it receives next starts a new request line. */
  rearm(socket: Socket): void {
    const state = this.lines.get(socket);
    if (!state || !state.ended || socket.destroyed || !socket.writable) return;
    state.length = 0;
    state.head = '';
    state.ended = false;
    socket.on('data', state.tap);
  }

  /** The request line as it stands once `packet`, the read the parser failed in, is added to what came before. */
  measure(socket: Socket | undefined, packet: Buffer): RequestLine {
    const state = socket && this.lines.get(socket);
    if (state?.ended) return { length: state.length, head: state.head };
    const { length, head } = extend(state ?? { length: 0, head: '' }, packet);
    return { length, head };
  }
}

/** The request line a single read shows, for a parser error with no connection to measure. */
export function requestLineIn(packet: Buffer): RequestLine {
  const { length, head } = extend({ length: 0, head: '' }, packet);
  return { length, head };
}
