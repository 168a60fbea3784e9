import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestContext } from './support/app.js';
import type { TestAgent } from './support/builders.js';
import { parseResponse } from './support/raw-http.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client connection that collects what it reads and knows when the server ended it. */
function open(port: number): Promise<{ socket: Socket; received: () => Buffer; ended: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ port, host: '127.0.0.1', noDelay: true }, () => {
      const ended = new Promise<number>((done) => socket.once('close', () => done(Date.now())));
      resolve({ socket, received: () => Buffer.concat(chunks), ended });
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
  });
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });

/**
 * What SIGTERM does (Nest's shutdown hook calls `app.close()`): the listener stops at once, idle keep-alive
 * connections end, a request in flight is answered and committed, and its connection then closes, so the drain
 * ends with the last answer instead of at the shutdown timeout.
 */
describe('graceful shutdown', () => {
  let ctx: TestContext;
  let agent: TestAgent;
  let closed = false;

  beforeAll(async () => {
    ctx = await TestContext.create();
    const owner = await ctx.register({ organizationName: 'Drain' });
    agent = await ctx.newAgent(owner.organization.id, 'Drain bot');
  });
  afterAll(async () => {
    if (!closed) await ctx?.close();
  });

  it('answers the request in flight with Connection: close, ends idle connections, and closes once it is answered', async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (ctx.app.getHttpServer().address() as AddressInfo).port;
    const body = Buffer.from(
      JSON.stringify({ inputContext: { prompt: 'in flight' }, outputDecision: { action: 'answer', text: 'Yes.' } }),
    );

    // An idle keep-alive connection: one request answered, the connection left open.
    const idle = await open(port);
    idle.socket.write(`GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    for (let i = 0; i < 50 && !parseResponse(idle.received()); i++) await sleep(20);
    expect(parseResponse(idle.received())?.headers.connection).not.toBe('close');

    // A request in flight: its head and half its body.
    const busy = await open(port);
    busy.socket.write(
      `POST /api/v1/traces HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
        `X-Api-Key: ${agent.key}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    busy.socket.write(body.subarray(0, body.length >> 1));
    await sleep(200);

    const closing = ctx.app.close().then(() => Date.now());
    closed = true;
    let stopped = false;
    for (let i = 0; i < 50 && !stopped; i++) {
      stopped = await refused(port);
      if (!stopped) await sleep(20);
    }
    expect(stopped).toBe(true);
    const idleEnded = await Promise.race([idle.ended, sleep(2000).then(() => undefined)]);
    expect(idleEnded, 'the idle keep-alive connection ends when the server closes').toBeDefined();

    busy.socket.write(body.subarray(body.length >> 1));
    const busyEnded = await Promise.race([busy.ended, sleep(5000).then(() => undefined)]);
    expect(busyEnded, 'the connection of the request in flight closes after its answer').toBeDefined();
    const answer = parseResponse(busy.received());
    expect(answer?.status, answer?.body).toBe(201);
    expect(answer?.headers.connection).toBe('close');
    const closedAt = await Promise.race([closing, sleep(5000).then(() => undefined)]);
    expect(closedAt, 'app.close() resolves once the last answer is sent').toBeDefined();
    expect(closedAt!).toBeGreaterThanOrEqual(busyEnded!);
    // 201 is sent after the group commit: the artefact smoke (tools/artefact/smoke.mjs) reads the trace back after a
    // restart.
    expect(JSON.parse(answer!.body).data).toMatchObject({ status: 'approved' });
  });
});
