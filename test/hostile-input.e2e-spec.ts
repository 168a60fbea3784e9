import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, TestContext, uniqueEmail } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { type RawResponse, rawExchange, rawRequest } from './support/raw-http.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const JSON_HEADERS = { 'content-type': 'application/json' };
const wide = (n: number, prefix = 'k') =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 1]));

async function listen(ctx: TestContext): Promise<number> {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  return (ctx.app.getHttpServer().address() as AddressInfo).port;
}

/** The envelope, request id and security headers every answer carries, here read off a raw socket. */
function expectRawEnvelope(res: RawResponse, status: number, code: string): Record<string, unknown> {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  const body = JSON.parse(res.body);
  expect(body).toMatchObject({ success: false, code, error: expect.any(String) });
  return body;
}

const registration = () => ({
  name: 'Ada',
  email: uniqueEmail('hostile'),
  password: TEST_PASSWORD,
  organizationName: 'Engines',
});

describe('hostile input', () => {
  let ctx: TestContext;
  let port: number;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: '2026-11-23T12:00:00.000Z' });
    port = await listen(ctx);
  });
  afterAll(async () => ctx?.close());

  const canLogIn = async (email: string) =>
    (await ctx.post('/api/v1/auth/login', { body: { email, password: TEST_PASSWORD } })).statusCode === 200;

  describe('body shape limits', () => {
    it('refuses 50,000 unknown keys before validation, with a short answer', async () => {
      const res = await ctx.post('/api/v1/auth/login', { body: wide(50_000) });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.error).toBe('Request body must not have more than 1000 keys in one object');
      expect(res.body.length).toBeLessThan(300);
    });

    it('refuses a query string of more than 1000 parameters', async () => {
      // The query string is parsed by the router, not by the body scan: the walk of the parsed value refuses it.
      const query = Object.entries(wide(1001, 'q'))
        .map(([k, v]) => `${k}=${v}`)
        .join('&');
      const res = await ctx.get(`/api/v1/versions?${query}`);
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.error).toBe('Query string must not have more than 1000 keys in one object');
    });

    it('counts keys on the raw text before parsing: a nested object past the limit is refused without a path', async () => {
      // The walk of a parsed value would name the field (inner); the scan of the text refuses before any parse.
      const res = await ctx.post('/api/v1/auth/login', { body: { email: 'a@example.com', inner: wide(1001) } });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.error).toBe('Request body must not have more than 1000 keys in one object');
      expect(body.details).toBeUndefined();
    });

    it('refuses more than 10,000 keys and array items in all, wherever they are', async () => {
      const res = await ctx.post('/api/v1/auth/login', {
        body: { email: 'a@example.com', password: 'x', list: Array(9_998).fill(0) },
      });
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(res.json().error).toBe('Request body must not have more than 10000 keys and array items in all');
      // One fewer item is within the limit: validation answers, about the unknown property.
      const within = await ctx.post('/api/v1/auth/login', {
        body: { email: 'a@example.com', password: 'x', list: Array(9_997).fill(0) },
      });
      expect(expectErrorEnvelope(within, 400, 'VALIDATION_ERROR').details).toContainEqual({
        field: 'list',
        message: 'property list should not exist',
      });
    });

    it('lists at most 20 validation details and says how many there were', async () => {
      const res = await ctx.post('/api/v1/auth/register', { body: { ...registration(), ...wide(990) } });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.details).toHaveLength(20);
      expect(body.detailsTotal).toBe(990);
      expect(res.body.length).toBeLessThan(3000);
    });

    it('refuses a number that overflows to Infinity in a free-form object, naming it, and stores nothing', async () => {
      const reg = await ctx.register();
      const agent = await ctx.newAgent(reg.organization.id);
      const res = await ctx.post('/api/v1/traces', {
        apiKey: agent.key,
        headers: JSON_HEADERS,
        payload:
          '{"inputContext":{"prompt":"p"},"outputDecision":{"action":"a","text":"t"},"metadata":{"n":1e309}}',
      });
      expect(expectErrorEnvelope(res, 400, 'VALIDATION_ERROR').details).toEqual([
        { field: 'metadata.n', message: 'metadata.n must be a finite number (this one overflows a double)' },
      ]);
      const list = await ctx.get('/api/v1/traces', { token: reg.token });
      expect(list.json().pagination.total).toBe(0);
    });

    it('refuses a JSON null, array or string body with 400 and changes nothing', async () => {
      const reg = await ctx.register({ organizationName: 'Kept Name' });
      for (const payload of ['null', '[]', '"renamed"', '42']) {
        const res = await ctx.patch('/api/v1/organizations/current', {
          token: reg.token,
          headers: JSON_HEADERS,
          payload,
        });
        expect(expectErrorEnvelope(res, 400, 'VALIDATION_ERROR').error).toBe(
          'Request body must be a JSON object',
        );
      }
      const current = await ctx.get('/api/v1/organizations/current', { token: reg.token });
      expect(current.json().data.name).toBe('Kept Name');
    });
  });

  describe('character sets and encodings', () => {
    it('refuses a charset other than UTF-8 with 415 and accepts utf-8 spelled any way', async () => {
      const latin1 = await ctx.post('/api/v1/auth/register', {
        body: registration(),
        headers: { 'content-type': 'application/json; charset=latin1' },
      });
      expectErrorEnvelope(latin1, 415, 'UNSUPPORTED_MEDIA_TYPE');
      const quoted = await ctx.post('/api/v1/auth/register', {
        body: registration(),
        headers: { 'content-type': 'application/json; charset="UTF-8"' },
      });
      expect(quoted.statusCode).toBe(201);
    });

    it('refuses invalid UTF-8 bytes with 400 instead of storing U+FFFD, and creates nothing', async () => {
      const email = uniqueEmail('utf8');
      const text = JSON.stringify({ ...registration(), email, name: 'Ada XX' });
      const bytes = Buffer.from(text, 'utf8');
      const at = bytes.indexOf('XX');
      bytes[at] = 0xff;
      bytes[at + 1] = 0xfe;
      const res = await ctx.post('/api/v1/auth/register', { payload: bytes, headers: JSON_HEADERS });
      expect(expectErrorEnvelope(res, 400, 'VALIDATION_ERROR').error).toBe('Request body is not valid UTF-8');
      expect(await canLogIn(email)).toBe(false);
    });

    it.each([
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ])('decodes a %s body', async (encoding, compress) => {
      const body = registration();
      const res = await ctx.post('/api/v1/auth/register', {
        payload: compress(Buffer.from(JSON.stringify(body))),
        headers: { ...JSON_HEADERS, 'content-encoding': encoding },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(await canLogIn(body.email)).toBe(true);
    });

    it('refuses a plain body labelled gzip with 400 and an unknown encoding with 415, creating nothing', async () => {
      const body = registration();
      const plain = await ctx.post('/api/v1/auth/register', {
        body,
        headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' },
      });
      expect(expectErrorEnvelope(plain, 400, 'VALIDATION_ERROR').error).toBe(
        'Request body is not valid gzip data',
      );
      const unknown = await ctx.post('/api/v1/auth/register', {
        payload: gzipSync(JSON.stringify(body)),
        headers: { ...JSON_HEADERS, 'content-encoding': 'compress' },
      });
      expectErrorEnvelope(unknown, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(await canLogIn(body.email)).toBe(false);
    });

    it('ignores the encoding of a request without a body', async () => {
      for (const encoding of ['gzip', 'bogus']) {
        const res = await ctx.get('/api/v1/versions', { headers: { 'content-encoding': encoding } });
        expect(res.statusCode).toBe(200);
      }
    });

    it('stops decoding a body past the inflation ratio with 413, even when it would fit the body limit', async () => {
      // 512 KiB of spaces compress to about 500 bytes: within the 1 MiB limit, past 100 times its size.
      const res = await ctx.post('/api/v1/auth/login', {
        payload: gzipSync(Buffer.alloc(512 * 1024, ' ')),
        headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' },
      });
      expect(expectErrorEnvelope(res, 413, 'PAYLOAD_TOO_LARGE').error).toBe(
        'Request body decompresses to more than 100 times its encoded size',
      );
    });

    it('drops a compressed body no parser reads, so the connection serves its next request', async () => {
      // Random text barely compresses: the decoder is well within its ratio and waits for a reader.
      const body = gzipSync(Buffer.from(JSON.stringify({ filler: randomBytes(300 * 1024).toString('base64') })));
      const head = (method: string, path: string, extra: string) =>
        `${method} ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`;
      // A GET with a compressed body, then a second request on the same connection, which closes after it.
      const res = await rawExchange(port, [
        head('GET', '/api/v1/versions', `Content-Encoding: gzip\r\nContent-Length: ${body.length}\r\n`),
        body,
        head('GET', '/api/v1/health/live', 'Connection: close\r\n'),
      ]);
      expect(res.status).toBe(200);
      expect(res.closedAfterMs).toBeLessThan(5000);
    });

    it('stops decoding a compression bomb with 413', async () => {
      const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, ' '));
      const res = await ctx.post('/api/v1/auth/login', {
        payload: bomb,
        headers: { ...JSON_HEADERS, 'content-encoding': 'gzip' },
      });
      expectErrorEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
    });
  });

  describe('headers', () => {
    it('refuses an empty X-Svc-Version as malformed', async () => {
      const res = await ctx.get('/api/v1/versions', { headers: { 'x-svc-version': '' } });
      expectErrorEnvelope(res, 400, 'VERSION_UNSUPPORTED');
    });

    it('refuses two Authorization headers in either order, and two API keys, with 400', async () => {
      const reg = await ctx.register();
      const valid = `Bearer ${reg.token}`;
      const ok = await rawRequest(port, {
        method: 'GET',
        path: '/api/v1/auth/me',
        headers: [['Authorization', valid]],
      });
      expect(ok.status).toBe(200);
      for (const headers of [
        [
          ['Authorization', valid],
          ['Authorization', 'Bearer garbage'],
        ],
        [
          ['authorization', 'Bearer garbage'],
          ['Authorization', valid],
        ],
        [
          ['X-Api-Key', 'svc_live_a'],
          ['x-api-key', 'svc_live_b'],
        ],
      ] as [string, string][][]) {
        const res = await rawRequest(port, { method: 'GET', path: '/api/v1/auth/me', headers });
        const body = expectRawEnvelope(res, 400, 'VALIDATION_ERROR');
        expect(body.details).toEqual([
          { field: `headers.${headers[0]![0].toLowerCase()}`, message: expect.stringMatching(/once/) },
        ]);
      }
    });

    it('refuses an Authorization header and an X-API-Key header together', async () => {
      const reg = await ctx.register();
      const res = await ctx.get('/api/v1/auth/me', { token: reg.token, apiKey: 'svc_live_garbage' });
      expect(expectErrorEnvelope(res, 400, 'VALIDATION_ERROR').details).toEqual([
        { field: 'headers.x-api-key', message: 'x-api-key must not be sent with authorization' },
      ]);
    });

    it('applies every check to a percent-encoded path as to the path it names', async () => {
      const reg = await ctx.register();
      const agent = await ctx.newAgent(reg.organization.id);
      const twice = await rawRequest(port, {
        method: 'GET',
        path: '/%61pi/v1/auth/me',
        headers: [
          ['Authorization', `Bearer ${reg.token}`],
          ['Authorization', 'Bearer garbage'],
        ],
      });
      expectRawEnvelope(twice, 400, 'VALIDATION_ERROR');
      // The schema version is resolved for it like any other: a trace is stored, not a 500.
      const trace = await ctx.post('/%61pi/v1/%74races', {
        apiKey: agent.key,
        body: { inputContext: { prompt: 'p' }, outputDecision: { action: 'a', text: 't' } },
      });
      expect(trace.statusCode, trace.body).toBe(201);
      expect(trace.headers['x-svc-version']).toBe('2026-04-11');
    });

    it('answers headers over 16 KB with 431 HEADERS_TOO_LARGE in the envelope, with a request id', async () => {
      const res = await rawRequest(port, {
        method: 'GET',
        path: '/api/v1/health',
        headers: [['X-Padding', 'p'.repeat(17 * 1024)]],
      });
      expectRawEnvelope(res, 431, 'HEADERS_TOO_LARGE');
      expect(res.headers['x-request-id']).toMatch(UUID);
    });

    it('answers a 20 KB query string with 414 URI_TOO_LONG in the envelope', async () => {
      const res = await rawRequest(port, {
        method: 'GET',
        path: `/api/v1/traces?q=${'a'.repeat(20 * 1024)}`,
      });
      expectRawEnvelope(res, 414, 'URI_TOO_LONG');
    });

    it('answers bytes that are not HTTP with 400 in the envelope', async () => {
      const res = await rawExchange(port, ['NOT HTTP AT ALL\r\n\r\n']);
      expectRawEnvelope(res, 400, 'VALIDATION_ERROR');
    });
  });
});

describe('slow and idle clients', () => {
  let ctx: TestContext;
  let port: number;

  beforeAll(async () => {
    ctx = await TestContext.create({
      config: { httpTimeouts: { requestMs: 1000, headersMs: 1000, keepAliveMs: 1000 } },
    });
    port = await listen(ctx);
  });
  afterAll(async () => ctx?.close());

  it('answers a body that stops half-way with 408 REQUEST_TIMEOUT and closes the connection', async () => {
    const res = await rawExchange(port, [
      'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
      '{"email":',
    ]);
    expectRawEnvelope(res, 408, 'REQUEST_TIMEOUT');
    expect(res.closedAfterMs).toBeGreaterThanOrEqual(900);
  });

  it('answers headers that never end with 408 and closes the connection', async () => {
    const res = await rawExchange(port, ['GET /api/v1/health HTTP/1.1\r\nHost: x\r\n']);
    expectRawEnvelope(res, 408, 'REQUEST_TIMEOUT');
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const res = await rawExchange(port, ['GET /api/v1/health/live HTTP/1.1\r\nHost: x\r\n\r\n']);
    expect(res.status).toBe(200);
    expect(res.closedAfterMs).toBeGreaterThanOrEqual(900);
  });
});

describe('shutdown', () => {
  it('closes idle keep-alive connections at once instead of waiting for their timeout', async () => {
    const ctx = await TestContext.create();
    const port = await listen(ctx);
    // The default keep-alive timeout is 72 s; the connection must close when the application does. The liveness probe
    // answers 200 however loaded the machine is (/health's database probe may not, and this is about the connection).
    const exchange = rawExchange(port, ['GET /api/v1/health/live HTTP/1.1\r\nHost: x\r\n\r\n'], 20_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await ctx.close();
    const res = await exchange;
    expect(res.status).toBe(200);
    expect(res.closedAfterMs).toBeLessThan(20_000);
  });
});
