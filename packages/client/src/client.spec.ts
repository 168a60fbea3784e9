import { describe, expect, expectTypeOf, it } from 'vitest';
import { createGovernanceClient } from './client.js';
import { Download } from './download.js';
import {
  codeOfStatus,
  ERROR_CODES,
  type ErrorCode,
  GovernanceError,
  isGovernanceError,
  retryAfterSecondsOf,
} from './errors.js';
import { BASE, chunked, failure, fakeFetch, json } from './spec/fake-fetch.js';
import type { Schemas } from './types.js';

const AGENT = { id: 'a'.repeat(24), name: 'Agent' };

describe('createGovernanceClient: calls', () => {
  it('answers the envelope’s data, typed by path', async () => {
    const { fetch, seen } = fakeFetch(() => json(200, { success: true, data: AGENT }));
    const client = createGovernanceClient({ baseUrl: `${BASE}/`, fetch, credentials: { jwt: 'jwt-1' } });
    const agent = await client.get('/api/v1/agents/{id}', { params: { path: { id: AGENT.id } } });
    expectTypeOf(agent).toEqualTypeOf<Schemas['AgentDetailDto']>();
    expect(agent).toEqual(AGENT);
    expect(seen[0]!.url.href).toBe(`${BASE}/api/v1/agents/${AGENT.id}`);
  });

  it('sends the credentials, the version pin and the client’s headers, and lets a call set its own', async () => {
    const { fetch, seen } = fakeFetch(() => json(200, { success: true, data: [] }));
    const headers = { 'X-Trace-Origin': 'spec' };
    await createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: { jwt: 'jwt-1' },
      version: '2026-04-11',
      headers,
    }).get('/api/v1/agents');
    await createGovernanceClient({ baseUrl: BASE, fetch, credentials: { apiKey: 'svc_live_x' } }).get(
      '/api/v1/agents',
    );
    await createGovernanceClient({ baseUrl: BASE, fetch, credentials: { scimToken: 'scim_x' } }).get(
      '/scim/v2/Users',
    );
    await createGovernanceClient({ baseUrl: BASE, fetch }).get('/api/v1/versions');
    await createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 'jwt-1' } }).get(
      '/api/v1/agents',
      {
        headers: { 'X-API-Key': 'svc_live_own' },
      },
    );
    const [jwt, key, scim, anonymous, own] = seen.map((r) => Object.fromEntries(r.headers));
    expect(jwt).toMatchObject({
      authorization: 'Bearer jwt-1',
      'x-svc-version': '2026-04-11',
      'x-trace-origin': 'spec',
    });
    expect(key).toMatchObject({ 'x-api-key': 'svc_live_x' });
    expect(key).not.toHaveProperty('authorization');
    expect(key).not.toHaveProperty('x-svc-version');
    expect(scim).toMatchObject({ authorization: 'Bearer scim_x' });
    expect(anonymous).not.toHaveProperty('authorization');
    expect(anonymous).not.toHaveProperty('x-api-key');
    // The service refuses Authorization with X-API-Key: a call's own credential replaces the client's.
    expect(own).toMatchObject({ 'x-api-key': 'svc_live_own' });
    expect(own).not.toHaveProperty('authorization');
  });

  it('answers a body that is not an envelope as it is (SCIM), and undefined for 204', async () => {
    const list = {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
      totalResults: 0,
      Resources: [],
    };
    const { fetch } = fakeFetch((r) =>
      r.method === 'DELETE' ? new Response(null, { status: 204 }) : json(200, list),
    );
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { scimToken: 'scim_x' } });
    expect(await client.get('/scim/v2/Users')).toEqual(list);
    expect(await client.delete('/scim/v2/Users/{id}', { params: { path: { id: 'u' } } })).toBeUndefined();
  });
});

describe('GovernanceError', () => {
  it('carries the status, code, message, details and the X-Request-Id', async () => {
    const details = [{ field: 'name', message: 'name must be a string' }];
    const { fetch } = fakeFetch(() =>
      failure(400, 'VALIDATION_ERROR', 'Validation failed', { details, detailsTotal: 21 }),
    );
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    const error = await client.post('/api/v1/agents', { body: { name: 'x' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    const governanceError = error as GovernanceError;
    expectTypeOf(governanceError.code).toEqualTypeOf<ErrorCode>();
    expect(governanceError).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      message: 'Validation failed',
      details,
      detailsTotal: 21,
      requestId: 'req-400',
    });
  });

  it('takes the request id of a 500 from its body when the header is missing', () => {
    const response = new Response(null, { status: 500 });
    const error = GovernanceError.from(response, {
      success: false,
      error: 'Internal error',
      code: 'INTERNAL_ERROR',
      requestId: 'r-1',
    });
    expect(error).toMatchObject({ code: 'INTERNAL_ERROR', requestId: 'r-1' });
  });

  it('reads an RFC 7644 error (SCIM) with its scimType, and gives it the generic code of its status', () => {
    const response = new Response(null, { status: 409, headers: { 'x-request-id': 'r-2' } });
    const body = {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '409',
      scimType: 'uniqueness',
      detail: 'A user with this userName exists',
    };
    expect(GovernanceError.from(response, body)).toMatchObject({
      status: 409,
      code: 'CONFLICT',
      scimType: 'uniqueness',
      message: 'A user with this userName exists',
      requestId: 'r-2',
    });
  });

  it('gives an answer that is not an envelope (a proxy’s page) the code of its status, and Retry-After', () => {
    const response = new Response(null, {
      status: 503,
      statusText: 'Service Unavailable',
      headers: { 'retry-after': '7' },
    });
    expect(GovernanceError.from(response, '<html>down</html>')).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      retryAfterSeconds: 7,
      body: '<html>down</html>',
      message: 'HTTP 503 Service Unavailable',
    });
    expect(GovernanceError.from(new Response(null, { status: 502 }), undefined).code).toBe(
      'SERVICE_UNAVAILABLE',
    );
    expect(GovernanceError.from(new Response(null, { status: 422 }), undefined).code).toBe(
      'VALIDATION_ERROR',
    );
  });

  it('maps a status to its generic code only where one says what it means, and HTTP_ERROR otherwise', () => {
    const cases: [number, ErrorCode][] = [
      [400, 'VALIDATION_ERROR'],
      [401, 'UNAUTHORIZED'],
      [403, 'FORBIDDEN'],
      [404, 'NOT_FOUND'],
      [405, 'METHOD_NOT_ALLOWED'],
      [408, 'REQUEST_TIMEOUT'],
      [409, 'CONFLICT'],
      [410, 'GONE'],
      [413, 'PAYLOAD_TOO_LARGE'],
      [422, 'VALIDATION_ERROR'],
      [429, 'RATE_LIMIT_EXCEEDED'],
      [431, 'HEADERS_TOO_LARGE'],
      [500, 'INTERNAL_ERROR'],
      [501, 'INTERNAL_ERROR'],
      [502, 'SERVICE_UNAVAILABLE'],
      [503, 'SERVICE_UNAVAILABLE'],
      [504, 'SERVICE_UNAVAILABLE'],
      // No code of the service's says what these mean: not passed off as a validation error.
      [402, 'HTTP_ERROR'],
      [406, 'HTTP_ERROR'],
      [412, 'HTTP_ERROR'],
      [418, 'HTTP_ERROR'],
      [451, 'HTTP_ERROR'],
      [302, 'HTTP_ERROR'],
      [0, 'HTTP_ERROR'],
    ];
    for (const [status, code] of cases) expect([status, codeOfStatus(status)]).toEqual([status, code]);
    // HTTP_ERROR is the client's own: not among the service's codes.
    expect(ERROR_CODES).not.toContain('HTTP_ERROR');
  });

  it('keeps a code this client does not know in rawCode, and gives code the generic code of the status', () => {
    const response = (status: number) => new Response(null, { status, headers: { 'x-request-id': 'r-3' } });
    const newer = GovernanceError.from(response(409), {
      success: false,
      error: 'The agent is archived',
      code: 'AGENT_ARCHIVED',
    });
    expectTypeOf(newer.code).toEqualTypeOf<ErrorCode>();
    expect(newer).toMatchObject({
      status: 409,
      code: 'CONFLICT',
      rawCode: 'AGENT_ARCHIVED',
      message: 'The agent is archived',
    });
    expect(isGovernanceError(newer, 'CONFLICT')).toBe(true);
    expect(GovernanceError.from(response(418), { success: false, error: 'x', code: 'TEAPOT' })).toMatchObject(
      {
        code: 'HTTP_ERROR',
        rawCode: 'TEAPOT',
      },
    );
    // A known code is kept as it is, in both fields.
    expect(
      GovernanceError.from(response(409), { success: false, error: 'x', code: 'ALREADY_DECIDED' }),
    ).toMatchObject({ code: 'ALREADY_DECIDED', rawCode: 'ALREADY_DECIDED' });
    // No code at all: no rawCode.
    expect(GovernanceError.from(response(404), undefined)).toMatchObject({
      code: 'NOT_FOUND',
      rawCode: undefined,
    });
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-05-04T09:00:00Z');
    expect(retryAfterSecondsOf('120', now)).toBe(120);
    expect(retryAfterSecondsOf('Mon, 04 May 2026 09:00:30 GMT', now)).toBe(30);
    expect(retryAfterSecondsOf('Mon, 04 May 2026 08:00:00 GMT', now)).toBe(0);
    expect(retryAfterSecondsOf('soon', now)).toBeUndefined();
    expect(retryAfterSecondsOf(null, now)).toBeUndefined();
  });
});

describe('refreshing an expired session', () => {
  it('calls refresh once on 401 TOKEN_EXPIRED and sends the request again, body included, with the new token', async () => {
    const { fetch, seen } = fakeFetch((r) =>
      r.headers.get('authorization') === 'Bearer old'
        ? failure(401, 'TOKEN_EXPIRED')
        : json(201, { success: true, data: { ...AGENT, apiKey: 'svc_agent_x' } }),
    );
    let calls = 0;
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: { jwt: 'old', refresh: async () => (calls++, 'new') },
    });
    const created = await client.post('/api/v1/agents', { body: { name: 'Agent' } });
    expect(created.apiKey).toBe('svc_agent_x');
    expect(calls).toBe(1);
    expect(seen.map((r) => [r.headers.get('authorization'), r.body])).toEqual([
      ['Bearer old', '{"name":"Agent"}'],
      ['Bearer new', '{"name":"Agent"}'],
    ]);
    expect(client.token).toBe('new');
    await client.get('/api/v1/agents');
    expect(seen[2]!.headers.get('authorization')).toBe('Bearer new');
  });

  it('shares one refresh between concurrent requests that failed together', async () => {
    const { fetch } = fakeFetch((r) =>
      r.headers.get('authorization') === 'Bearer old'
        ? failure(401, 'UNAUTHORIZED')
        : json(200, { success: true, data: [] }),
    );
    let calls = 0;
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: {
        jwt: 'old',
        refresh: async () => {
          calls++;
          await new Promise((resolve) => setTimeout(resolve, 10));
          return 'new';
        },
      },
    });
    await Promise.all([
      client.get('/api/v1/agents'),
      client.get('/api/v1/policies'),
      client.get('/api/v1/webhooks'),
    ]);
    expect(calls).toBe(1);
  });

  it('throws the 401 when refresh gives no token, when the retry fails too, or for another code', async () => {
    const expired = fakeFetch(() => failure(401, 'TOKEN_EXPIRED'));
    let calls = 0;
    const giveUp = createGovernanceClient({
      baseUrl: BASE,
      fetch: expired.fetch,
      credentials: { jwt: 'old', refresh: async () => (calls++, null) },
    });
    await expect(giveUp.get('/api/v1/agents')).rejects.toMatchObject({ status: 401, code: 'TOKEN_EXPIRED' });
    expect(expired.seen).toHaveLength(1);

    const always = fakeFetch(() => failure(401, 'TOKEN_EXPIRED'));
    const once = createGovernanceClient({
      baseUrl: BASE,
      fetch: always.fetch,
      credentials: { jwt: 'old', refresh: async () => (calls++, 'new') },
    });
    await expect(once.get('/api/v1/agents')).rejects.toMatchObject({ code: 'TOKEN_EXPIRED' });
    expect(always.seen).toHaveLength(2);

    const revoked = fakeFetch(() => failure(401, 'SESSION_REVOKED'));
    const noRefresh = createGovernanceClient({
      baseUrl: BASE,
      fetch: revoked.fetch,
      credentials: { jwt: 'old', refresh: async () => (calls++, 'new') },
    });
    await expect(noRefresh.get('/api/v1/agents')).rejects.toMatchObject({ code: 'SESSION_REVOKED' });
    expect(calls).toBe(2);
  });
});

describe('download', () => {
  it('gives the bytes, the media type and the file name of an attachment', async () => {
    const pdf = new TextEncoder().encode('%PDF-1.7\n…');
    const { fetch } = fakeFetch(
      () =>
        new Response(pdf, {
          headers: {
            'content-type': 'application/pdf',
            'content-disposition': 'attachment; filename="compliance-report-2026-04-01-to-2026-05-01.pdf"',
          },
        }),
    );
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    const file = await client.download('/api/v1/reports/compliance');
    expect(file.contentType).toBe('application/pdf');
    expect(file.filename).toBe('compliance-report-2026-04-01-to-2026-05-01.pdf');
    expect(new TextDecoder().decode((await file.bytes()).slice(0, 5))).toBe('%PDF-');
  });

  it('reads NDJSON line by line across chunk boundaries', async () => {
    const { fetch } = fakeFetch(() =>
      chunked(['{"sequence":1}\n{"seq', 'uence":2}\n', '\n{"sequence":3}'], 'application/x-ndjson'),
    );
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    const lines: unknown[] = [];
    for await (const line of (await client.download('/api/v1/audit/export')).ndjson()) lines.push(line);
    expect(lines).toEqual([{ sequence: 1 }, { sequence: 2 }, { sequence: 3 }]);
  });

  it('throws GovernanceError for an error answer instead of handing out its body', async () => {
    const { fetch } = fakeFetch(() => failure(429, 'RATE_LIMITED', 'Too many reports', {}));
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    await expect(client.download('/api/v1/reports/compliance')).rejects.toMatchObject({
      status: 429,
      code: 'RATE_LIMITED',
    });
  });

  it('gives a file name safe to write: the last segment, no separators or control characters', () => {
    const named = (disposition: string) =>
      new Download(new Response('x', { headers: { 'content-disposition': disposition } })).filename;
    expect(named('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(named('attachment; filename="..\\..\\windows\\win.ini"')).toBe('win.ini');
    expect(named("attachment; filename*=UTF-8''..%2F..%2Fhome%2Fx%2F.bashrc")).toBe('.bashrc');
    expect(named("attachment; filename*=UTF-8''report%0A%0D%09%7F.pdf")).toBe('report.pdf');
    expect(named('attachment; filename="a\tb.pdf"')).toBe('ab.pdf');
    expect(named('attachment; filename=".."')).toBeNull();
    expect(named('attachment; filename="reports/"')).toBeNull();
    expect(named("attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf")).toBe('résumé.pdf');
    expect(named('attachment; filename=plain.csv; size=3')).toBe('plain.csv');
  });

  it('falls back to filename when filename* does not decode, instead of throwing URIError', () => {
    const named = (disposition: string) =>
      new Download(new Response('x', { headers: { 'content-disposition': disposition } })).filename;
    expect(named('attachment; filename*=UTF-8\'\'%E0%A4%A; filename="fallback.pdf"')).toBe('fallback.pdf');
    expect(named("attachment; filename*=UTF-8''%ZZ")).toBeNull();
  });

  it('cancels the download when the consumer of ndjson() stops early', async () => {
    let cancelled: unknown = 'not cancelled';
    let pulls = 0;
    const encoder = new TextEncoder();
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls += 1;
        controller.enqueue(encoder.encode(`{"sequence":${pulls}}\n`));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const file = new Download(new Response(endless, { headers: { 'content-type': 'application/x-ndjson' } }));
    const lines: unknown[] = [];
    for await (const line of file.ndjson()) {
      lines.push(line);
      if (lines.length === 2) break;
    }
    expect(lines).toEqual([{ sequence: 1 }, { sequence: 2 }]);
    expect(cancelled).toBeUndefined();
    const pulled = pulls;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pulls).toBe(pulled);
  });

  it('cancels the download when a line is not JSON', async () => {
    let cancelled = false;
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('{"a":1}\nnot json\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const lines: unknown[] = [];
    await expect(
      (async () => {
        for await (const line of new Download(new Response(body)).ndjson()) lines.push(line);
      })(),
    ).rejects.toThrow(SyntaxError);
    expect(lines).toEqual([{ a: 1 }]);
    expect(cancelled).toBe(true);
  });
});
