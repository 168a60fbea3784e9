import type { Socket } from 'node:net';

/** How long a closing connection keeps reading what the client still sends, at most. */
export const LINGER_MS = 5000;

export interface LingerLimits {
  /** Bytes read and discarded after the answer at most (the body limit: a client may finish one body). */
  maxBytes: number;
  /** Milliseconds at most. */
  maxMs: number;
}

/**
 * Closing a connection without resetting it. A socket closed while request bytes are still unread (a body the
 * service refused before reading it, a head the parser refused half-way) makes the kernel send RST, and a client
 * still writing then loses the answer it had not yet read. So the write side is ended once the answer is flushed
 * (FIN: the client reads the answer, then end of stream), and what the client still sends is read and discarded
 * until it closes its side, up to the body limit or LINGER_MS, whichever comes first; then the socket is destroyed.
 */
export class LingeringClose {
  private readonly lingering = new Set<Socket>();

  constructor(private readonly limits: LingerLimits) {}

  /** Whether the socket is being closed here (its HTTP parser detached: a later parser error is not answered). */
  isLingering(socket: Socket): boolean {
    return this.lingering.has(socket);
  }

  /**
   * Takes over the closing of every connection Node's HTTP server ends after a response (`Connection: close`, the
   * client's or the service's): it calls `destroySoon`, which would destroy the socket as soon as the answer is
   * flushed, whatever the client was still sending.
   */
  adopt(socket: Socket): void {
    socket.destroySoon = () => this.close(socket);
  }

  /** Ends the write side after what was written, then reads and discards until the client closes or a limit. */
  close(socket: Socket): void {
    if (this.lingering.has(socket) || socket.destroyed) return;
    if (!socket.writable) {
      // Ended already (the client ended first, and Node then): destroyed once what was written is flushed.
      if (socket.writableFinished) socket.destroy();
      else socket.once('finish', () => socket.destroy());
      return;
    }
    this.lingering.add(socket);
    socket.end();
    // Node's HTTP parser reads the connection natively or through its 'data' listener: detached, nothing more is
    // parsed as a request (adding a listener takes the socket out of the parser's native reads, so bytes arrive
    // here).
    socket.removeAllListeners('data');
    let budget = this.limits.maxBytes;
    socket.on('data', (chunk: Buffer) => {
      budget -= chunk.length;
      if (budget < 0) socket.destroy();
    });
    // The client finished too: the socket closes itself once the answer is flushed (autoDestroy).
    const timer = setTimeout(() => socket.destroy(), this.limits.maxMs);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      this.lingering.delete(socket);
    });
    socket.resume();
    // A connection Node's parser read natively (its fast path) had its reads stopped when the unread request
    // paused it; the stream does not start them again on resume, so the handle is told to read.
    const handle = (socket as unknown as { _handle?: { reading?: boolean; readStart?: () => number } })
      ._handle;
    if (handle && handle.reading === false && typeof handle.readStart === 'function') {
      handle.reading = true;
      handle.readStart();
    }
  }

  /** At shutdown: these connections have had their answer and must not hold the server open. */
  destroyAll(): void {
    for (const socket of this.lingering) socket.destroy();
  }
}
