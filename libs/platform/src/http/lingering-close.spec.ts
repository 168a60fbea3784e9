import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LingeringClose } from './lingering-close.js';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** How long the server's side of each connection lived, in milliseconds. */
const lifetimes: number[] = [];

/** A loopback server whose connections answer `answer` at once and are closed by `closer`. */
async function answeringServer(closer: LingeringClose, answer: string): Promise<number> {
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    const opened = Date.now();
    socket.once('close', () => lifetimes.push(Date.now() - opened));
    socket.write(answer);
    closer.close(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * A client that writes `total` bytes whatever it receives (the first 64 KB, then the rest once the answer arrives),
 * then ends, and reports how the connection ended.
 */
function client(port: number, total: number) {
  return new Promise<{ received: string; error?: string; ms: number }>((resolve) => {
    const started = Date.now();
    let received = '';
    let error: string | undefined;
    const piece = Buffer.alloc(64 * 1024, 'x');
    const socket: Socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () =>
      socket.write(piece),
    );
    socket.on('data', (chunk) => {
      if (received === '') {
        for (let sent = piece.length; sent < total; sent += piece.length) socket.write(piece);
        socket.end();
      }
      received += chunk.toString();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code));
    socket.on('close', () => resolve({ received, error, ms: Date.now() - started }));
  });
}

describe('LingeringClose', () => {
  it('reads what the client still sends after the answer, so the client reads the answer and no reset', async () => {
    const port = await answeringServer(
      new LingeringClose({ maxBytes: 4 * 1024 * 1024, maxMs: 5000 }),
      'answer',
    );
    lifetimes.length = 0;
    for (let i = 0; i < 3; i += 1) {
      const result = await client(port, 2 * 1024 * 1024);
      expect(result).toMatchObject({ received: 'answer', error: undefined });
    }
    // Each closed when its client finished, not at the time limit.
    for (let i = 0; i < 100 && lifetimes.length < 3; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(lifetimes).toHaveLength(3);
    expect(Math.max(...lifetimes)).toBeLessThan(2000);
  });

  it('stops reading after its byte budget', async () => {
    const port = await answeringServer(new LingeringClose({ maxBytes: 64 * 1024, maxMs: 5000 }), 'answer');
    const result = await client(port, 64 * 1024 * 1024);
    expect(result.received).toBe('answer');
    expect(result.ms).toBeLessThan(4000);
  });

  it('stops reading after its time', async () => {
    const closer = new LingeringClose({ maxBytes: 1024 * 1024, maxMs: 300 });
    let closedAfterMs = 0;
    let lingered: Socket | undefined;
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      lingered = socket;
      const started = Date.now();
      socket.on('close', () => (closedAfterMs = Date.now() - started));
      closer.close(socket);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // A client that neither sends nor closes: the server's side ends after maxMs.
    const socket = connect({
      port: (server.address() as AddressInfo).port,
      host: '127.0.0.1',
      allowHalfOpen: true,
    });
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('end', resolve));
    for (let i = 0; i < 100 && closedAfterMs === 0; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 20));
    socket.destroy();
    expect(closedAfterMs).toBeGreaterThanOrEqual(290);
    expect(closedAfterMs).toBeLessThan(1500);
    expect(closer.isLingering(lingered!)).toBe(false);
  });
});
