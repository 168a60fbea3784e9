import { randomUUID } from 'node:crypto';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestContext } from './support/app.js';
import { parseResponse } from './support/raw-http.js';

/** The application's body limit (BODY_LIMIT_BYTES' default, which the suite does not override). */
const BODY_LIMIT = 1024 * 1024;
const REPEAT = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function listen(ctx: TestContext): Promise<number> {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  return (ctx.app.getHttpServer().address() as AddressInfo).port;
}

interface Exchange {
  raw: Buffer;
  /** The client's socket error (ECONNRESET, EPIPE), if any. */
  error?: string;
  /** The connection closed within the exchange's time. */
  closed: boolean;
}

/** A fresh connection that may keep writing after the server's FIN, as a client sending a body does. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true, noDelay: true }, () =>
      resolve(socket),
    );
    socket.once('error', reject);
  });
}

/**
 * Sends a request as a client that does not wait for an answer before its body: the head and the body's first
 * 16 KB, then, once the answer begins, the rest of the body and the end of the stream (after 250 ms without an
 * answer too: a chunked body is refused only once the limit is read). Reads until the server closes.
 */
async function sendWhole(
  port: number,
  head: string | Buffer,
  body: Buffer,
  waitMs = 15_000,
): Promise<Exchange> {
  const socket = await open(port);
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let error: string | undefined;
    let restSent = false;
    const sendRest = () => {
      if (restSent) return;
      restSent = true;
      for (let at = 16 * 1024; at < body.length; at += 64 * 1024)
        socket.write(body.subarray(at, at + 64 * 1024));
      socket.end();
    };
    const fallback = setTimeout(sendRest, 250);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, waitMs);
    socket.on('data', (chunk) => {
      received.push(chunk);
      sendRest();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    socket.on('close', () => {
      clearTimeout(fallback);
      clearTimeout(timer);
      resolve({ raw: Buffer.concat(received), error, closed: !timedOut });
    });
    socket.write(head);
    socket.write(body.subarray(0, 16 * 1024));
  });
}

/** The complete answer: status line, headers, and the whole JSON error body its Content-Length announces. */
function expectAnswer(exchange: Exchange, status: number, code: string): void {
  expect(exchange.error, 'the client saw its connection reset').toBeUndefined();
  const res = parseResponse(exchange.raw);
  expect(res, `no complete head in ${exchange.raw.length} bytes`).toBeDefined();
  expect(res!.status, res!.body).toBe(status);
  expect(Buffer.byteLength(res!.body)).toBe(Number(res!.headers['content-length']));
  expect(res!.headers['content-type']).toMatch(/^application\/json/);
  expect(res!.headers.connection).toBe('close');
  expect(JSON.parse(res!.body)).toMatchObject({ success: false, code, error: expect.any(String) });
}

const requestHead = (method: string, path: string, headers: [string, string | number][]) =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`;

/** About 1 MB of JSON with 50,000 keys. */
const wideJson = Buffer.from(
  JSON.stringify(
    Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`key-${String(i).padStart(8, '0')}`, 1])),
  ),
);
/** About 1 MB of two-byte UTF-8 characters. */
const multibyte = Buffer.from(`{"note":"${'é'.repeat(500_000)}"}`);
const filler = (size: number) => Buffer.alloc(size, 'a');

/** A chunked body of `size` bytes in 64 KB chunks, with its last chunk. */
function chunked(size: number): Buffer {
  const parts: Buffer[] = [];
  for (let left = size; left > 0; left -= 64 * 1024) {
    const n = Math.min(left, 64 * 1024);
    parts.push(Buffer.from(`${n.toString(16)}\r\n`), filler(n), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

describe('answers given before the request is read', () => {
  let ctx: TestContext;
  let port: number;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: '2026-11-23T12:00:00.000Z' });
    expect(ctx.config.bodyLimitBytes).toBe(BODY_LIMIT);
    port = await listen(ctx);
  });
  afterAll(async () => ctx?.close());

  const json = (body: Buffer): [string, string | number][] => [
    ['Content-Type', 'application/json'],
    ['Content-Length', body.length],
  ];
  const cases: [string, () => [string, Buffer], number, string][] = [
    [
      'an anonymous GET /agents with a 50,000-key JSON body',
      () => [requestHead('GET', '/api/v1/agents', json(wideJson)), wideJson],
      401,
      'UNAUTHORIZED',
    ],
    [
      'an anonymous GET /audit/export with 1 MB of multibyte text',
      () => [requestHead('GET', '/api/v1/audit/export', json(multibyte)), multibyte],
      401,
      'UNAUTHORIZED',
    ],
    [
      'a POST /agents whose Content-Length is over the body limit',
      () => {
        const body = filler(BODY_LIMIT + 64 * 1024);
        return [requestHead('POST', '/api/v1/agents', json(body)), body];
      },
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'a chunked POST /agents that grows past the body limit',
      () => {
        const body = chunked(BODY_LIMIT + 64 * 1024);
        const head = requestHead('POST', '/api/v1/agents', [
          ['Content-Type', 'application/json'],
          ['Transfer-Encoding', 'chunked'],
        ]);
        return [head, body];
      },
      413,
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'a PATCH /policies/{id} with 1 MB of a type no parser reads',
      () => {
        const body = filler(BODY_LIMIT - 1024);
        const head = requestHead('PATCH', `/api/v1/policies/${randomUUID()}`, [
          ['Content-Type', 'application/xml'],
          ['Content-Length', body.length],
        ]);
        return [head, body];
      },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a PATCH /policies/{id} with two Authorization headers and a 1 MB body',
      () => {
        const head = requestHead('PATCH', `/api/v1/policies/${randomUUID()}`, [
          ['Authorization', 'Bearer a'],
          ['Authorization', 'Bearer b'],
          ...json(multibyte),
        ]);
        return [head, multibyte];
      },
      400,
      'VALIDATION_ERROR',
    ],
    [
      'a 20 KB URI followed by a 1 MB body',
      () => [requestHead('POST', `/api/v1/agents?q=${'a'.repeat(20 * 1024)}`, json(wideJson)), wideJson],
      414,
      'URI_TOO_LONG',
    ],
    [
      '20 KB of headers followed by a 1 MB body',
      () => [
        requestHead('POST', '/api/v1/agents', [['X-Padding', 'p'.repeat(20 * 1024)], ...json(wideJson)]),
        wideJson,
      ],
      431,
      'HEADERS_TOO_LARGE',
    ],
  ];

  it.each(cases)(
    `answers %s completely, closes the connection without a reset (${REPEAT} times)`,
    async (_label, request, status, code) => {
      const [head, body] = request();
      for (let i = 0; i < REPEAT; i += 1) {
        const exchange = await sendWhole(port, head, body);
        expect(exchange.closed).toBe(true);
        expectAnswer(exchange, status, code);
      }
    },
    60_000,
  );

  it('keeps the connection of a request it read whole, on the parser’s native read path', async () => {
    const server = ctx.app.getHttpServer() as import('node:http').Server;
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const socket = await open(port);
    const received: Buffer[] = [];
    socket.on('data', (chunk) => received.push(chunk));
    socket.write(requestHead('GET', '/api/v1/health', []));
    for (let i = 0; i < 50 && !parseResponse(Buffer.concat(received)); i += 1) await sleep(20);
    const res = parseResponse(Buffer.concat(received))!;
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('keep-alive');
    // Nothing of the service took the connection off Node's native parsing (a 'data' listener would have): every
    // request of a keep-alive connection would pay for it.
    const served = (await accepted) as Socket & { parser?: { _consumed?: boolean } };
    expect(served.parser?._consumed).toBe(true);
    socket.destroy();
  });

  describe('the drain after an answer is bounded', () => {
    /** Sends an endless body, `step` bytes at a time, `pauseMs` apart; returns when the server cut it off. */
    async function sendForever(step: number, pauseMs: number) {
      const socket = await open(port);
      const received: Buffer[] = [];
      let answeredAt = 0;
      let sentAfterAnswer = 0;
      let closed = false;
      socket.on('data', (chunk) => {
        received.push(chunk);
        answeredAt ||= Date.now();
      });
      socket.on('error', () => undefined); // the cut-off may reset: the answer was read before it
      socket.on('close', () => (closed = true));
      socket.write(requestHead('GET', '/api/v1/agents', [['Content-Length', 1024 * 1024 * 1024]]));
      const piece = filler(step);
      const started = Date.now();
      while (!closed && Date.now() - started < 20_000) {
        if (!socket.write(piece) && pauseMs === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        if (answeredAt) sentAfterAnswer += step;
        await sleep(pauseMs);
      }
      socket.destroy();
      return { raw: Buffer.concat(received), closed, cutAfterMs: Date.now() - answeredAt, sentAfterAnswer };
    }

    it('cuts off a client that keeps sending fast once it sent a body limit after the answer', async () => {
      const result = await sendForever(64 * 1024, 0);
      expect(result.closed).toBe(true);
      expectAnswer({ raw: result.raw, closed: true }, 401, 'UNAUTHORIZED');
      // Well within the 5 seconds: the bytes ran out first.
      expect(result.cutAfterMs).toBeLessThan(4000);
      // The drain stopped: what was written beyond the limit is what the sockets' buffers held.
      expect(result.sentAfterAnswer).toBeLessThan(16 * BODY_LIMIT);
    }, 30_000);

    it('cuts off a client that trickles forever after 5 seconds', async () => {
      const result = await sendForever(1024, 100);
      expect(result.closed).toBe(true);
      expectAnswer({ raw: result.raw, closed: true }, 401, 'UNAUTHORIZED');
      expect(result.cutAfterMs).toBeGreaterThanOrEqual(4500);
      expect(result.cutAfterMs).toBeLessThan(8000);
    }, 30_000);
  });

  describe('a request line over the URI limit', () => {
    /** Writes `pieces` as separate TCP sends, `pauseMs` apart (after `socket`'s earlier traffic), and reads to the close. */
    async function sendInPieces(pieces: string[], pauseMs = 30, socket?: Socket): Promise<Exchange> {
      const conn = socket ?? (await open(port));
      const received: Buffer[] = [];
      let error: string | undefined;
      let closed = false;
      conn.on('data', (chunk) => received.push(chunk));
      conn.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
      const done = new Promise<void>((resolve) => conn.once('close', () => resolve()));
      conn.once('close', () => (closed = true));
      for (const piece of pieces) {
        if (closed) break;
        conn.write(piece);
        await sleep(pauseMs);
      }
      conn.end();
      await Promise.race([done, sleep(10_000)]);
      conn.destroy();
      return { raw: Buffer.concat(received), error, closed };
    }

    const longLine = (path = '/api/v1/traces') => `GET ${path}?q=${'a'.repeat(20 * 1024)} HTTP/1.1\r\n`;
    const rest = 'Host: 127.0.0.1\r\nConnection: close\r\n\r\n';
    /** `text` cut into `n` pieces, the first two bytes alone (inside the method). */
    const cut = (text: string, n: number) => {
      const size = Math.ceil((text.length - 2) / (n - 1));
      const pieces = [text.slice(0, 2)];
      for (let at = 2; at < text.length; at += size) pieces.push(text.slice(at, at + size));
      return pieces;
    };

    it('answers 414 URI_TOO_LONG to a 20 KB request line in one packet', async () => {
      for (let i = 0; i < REPEAT; i += 1) {
        expectAnswer(await sendInPieces([longLine() + rest]), 414, 'URI_TOO_LONG');
      }
    });

    it('answers 414 URI_TOO_LONG to the same request line in several packets', async () => {
      for (let i = 0; i < REPEAT; i += 1) {
        expectAnswer(await sendInPieces([...cut(longLine(), 6), rest]), 414, 'URI_TOO_LONG');
      }
    });

    it('answers 414 to a long request line in several packets on a connection that served a request before', async () => {
      for (let i = 0; i < REPEAT; i += 1) {
        const socket = await open(port);
        const first: Buffer[] = [];
        socket.on('data', (chunk) => first.push(chunk));
        socket.write(requestHead('GET', '/api/v1/health', []));
        for (let wait = 0; wait < 100 && !parseResponse(Buffer.concat(first)); wait += 1) await sleep(20);
        const health = parseResponse(Buffer.concat(first));
        expect(health?.status).toBe(200);
        // The first answer is complete: what follows on the connection is the second exchange.
        socket.removeAllListeners('data');
        expectAnswer(await sendInPieces([...cut(longLine(), 5), rest], 30, socket), 414, 'URI_TOO_LONG');
      }
    });

    it('answers a long SCIM request line in several packets with 414 in the SCIM error format', async () => {
      const res = await sendInPieces([...cut(longLine('/scim/v2/Users'), 4), rest]);
      expect(res.error).toBeUndefined();
      const parsed = parseResponse(res.raw)!;
      expect(parsed.status).toBe(414);
      expect(parsed.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(JSON.parse(parsed.body)).toMatchObject({ status: '414' });
    });

    it('answers 431 HEADERS_TOO_LARGE to 20 KB of headers, in one packet or several', async () => {
      const head = `GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'p'.repeat(20 * 1024)}\r\n\r\n`;
      for (let i = 0; i < REPEAT; i += 1) {
        expectAnswer(await sendInPieces([head]), 431, 'HEADERS_TOO_LARGE');
        expectAnswer(await sendInPieces(cut(head, 6)), 431, 'HEADERS_TOO_LARGE');
      }
    });
  });
});
