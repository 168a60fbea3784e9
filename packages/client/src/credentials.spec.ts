import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGovernanceClient, type GovernanceClient } from './client.js';
import { RedirectRefusedError } from './credentials.js';
import { GovernanceError } from './errors.js';
import { BASE, failure, fakeFetch, json, within } from './spec/fake-fetch.js';

/** A local HTTP server that records what it receives and answers with `answer`. */
async function server(
  answer: (
    url: string,
    write: (status: number, headers: Record<string, string>, body?: string) => void,
  ) => void,
) {
  const received: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const http: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      answer(req.url!, (status, headers, text) => res.writeHead(status, headers).end(text));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  servers.push(http);
  return { url: `http://127.0.0.1:${port}`, received };
}
const servers: Server[] = [];
afterEach(async () => {
  for (const http of servers.splice(0)) {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  }
});

describe('credentials go to the client’s origin only', () => {
  it('does not follow a redirect to another origin, so the workspace key stays home (real fetch, real servers)', async () => {
    const elsewhere = await server((_url, write) =>
      write(200, { 'content-type': 'application/json' }, JSON.stringify({ success: true, data: [] })),
    );
    const service = await server((url, write) => write(307, { location: `${elsewhere.url}${url}` }));
    const client = createGovernanceClient({
      baseUrl: service.url,
      credentials: { apiKey: 'svc_live_secret' },
    });

    const error = await client.get('/api/v1/agents').catch((e: unknown) => e);
    const post = await client.post('/api/v1/agents', { body: { name: 'Agent' } }).catch((e: unknown) => e);
    // Nothing, and no key, ever reached the other origin.
    expect(elsewhere.received.map((r) => r.headers['x-api-key'])).toEqual([]);
    expect(service.received.map((r) => r.headers['x-api-key'])).toEqual([
      'svc_live_secret',
      'svc_live_secret',
    ]);
    expect(error).toBeInstanceOf(RedirectRefusedError);
    expect(error).toMatchObject({ status: 307, location: `${elsewhere.url}/api/v1/agents` });
    expect((error as Error).message).toMatch(/does not follow/);
    expect(post).toBeInstanceOf(RedirectRefusedError);
  });

  it('sends every request with redirect: manual, even when a call asks to follow', async () => {
    const { fetch, seen } = fakeFetch(() => json(200, { success: true, data: [] }));
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { apiKey: 'svc_live_x' } });
    await client.get('/api/v1/agents');
    await client.get('/api/v1/agents', { redirect: 'follow' });
    expect(seen.map((r) => r.redirect)).toEqual(['manual', 'manual']);
    expect(seen.map((r) => r.headers.get('x-api-key'))).toEqual(['svc_live_x', 'svc_live_x']);
  });

  it('throws RedirectRefusedError for a 3xx a custom fetch hands back, rather than a GovernanceError', async () => {
    const { fetch } = fakeFetch(
      () => new Response(null, { status: 302, headers: { location: 'https://evil.example/api/v1/agents' } }),
    );
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 'jwt' } });
    await expect(client.get('/api/v1/agents')).rejects.toMatchObject({
      name: 'RedirectRefusedError',
      status: 302,
      location: 'https://evil.example/api/v1/agents',
    });
  });

  it('sends no credential to a call’s own baseUrl on another origin, and still the headers and version', async () => {
    const { fetch, seen } = fakeFetch(() => json(200, { success: true, data: [] }));
    for (const credentials of [{ apiKey: 'svc_live_x' }, { jwt: 'jwt-1' }, { scimToken: 'scim_x' }]) {
      const client = createGovernanceClient({
        baseUrl: `${BASE}/`,
        fetch,
        credentials,
        version: '2026-04-11',
        headers: { 'X-Trace-Origin': 'spec' },
      });
      await client.get('/api/v1/agents', { baseUrl: 'https://elsewhere.example' });
      await client.get('/api/v1/agents', { baseUrl: `${BASE}/` });
    }
    const [away, home] = [seen.filter((_r, i) => i % 2 === 0), seen.filter((_r, i) => i % 2 === 1)];
    for (const request of away) {
      expect(request.url.origin).toBe('https://elsewhere.example');
      expect(request.headers.get('x-api-key')).toBeNull();
      expect(request.headers.get('authorization')).toBeNull();
      expect(request.headers.get('x-svc-version')).toBe('2026-04-11');
      expect(request.headers.get('x-trace-origin')).toBe('spec');
    }
    expect(home.map((r) => r.headers.get('x-api-key') ?? r.headers.get('authorization'))).toEqual([
      'svc_live_x',
      'Bearer jwt-1',
      'Bearer scim_x',
    ]);
  });
});

describe('the refresh hook', () => {
  /** A service where the old token is expired everywhere, the refresh route included. */
  const expiredEverywhere = () =>
    fakeFetch((r) =>
      r.headers.get('authorization') === 'Bearer old'
        ? failure(401, 'TOKEN_EXPIRED', 'Token expired')
        : json(200, { success: true, data: r.url.pathname.endsWith('/refresh') ? { token: 'new' } : [] }),
    );

  it('ends with the 401, not a hang, when the hook refreshes through the same client and that fails', async () => {
    const { fetch, seen } = expiredEverywhere();
    let calls = 0;
    const client: GovernanceClient = createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: {
        jwt: 'old',
        refresh: async () => {
          calls++;
          return (await client.post('/api/v1/auth/refresh')).token;
        },
      },
    });
    const error = await within(client.get('/api/v1/agents'), 2000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    expect(error).toMatchObject({ status: 401, code: 'TOKEN_EXPIRED' });
    expect(calls).toBe(1);
    expect(seen.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      'GET /api/v1/agents',
      'POST /api/v1/auth/refresh',
    ]);
  });

  it('does not wait on itself when the hook calls another route of the same client', async () => {
    const { fetch } = expiredEverywhere();
    const client: GovernanceClient = createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: {
        jwt: 'old',
        refresh: async () => {
          await client.get('/api/v1/auth/me');
          return 'new';
        },
      },
    });
    await expect(within(client.get('/api/v1/agents'), 2000)).rejects.toMatchObject({
      status: 401,
      code: 'TOKEN_EXPIRED',
    });
  });

  it('never refreshes for the session routes themselves (a wrong password is the answer)', async () => {
    const { fetch, seen } = fakeFetch(() => failure(401, 'UNAUTHORIZED'));
    let calls = 0;
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: { jwt: 'old', refresh: async () => (calls++, 'new') },
    });
    await expect(client.post('/api/v1/auth/refresh')).rejects.toMatchObject({ status: 401 });
    await expect(
      client.post('/api/v1/auth/login', { body: { email: 'a@example.com', password: 'x' } }),
    ).rejects.toMatchObject({ status: 401 });
    expect(calls).toBe(0);
    expect(seen).toHaveLength(2);
  });

  it('surfaces a hook that rejects as the request’s own 401', async () => {
    const { fetch, seen } = expiredEverywhere();
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: {
        jwt: 'old',
        refresh: async () => {
          throw new Error('the identity provider is down');
        },
      },
    });
    const error = await within(client.get('/api/v1/agents'), 2000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    expect(error).toMatchObject({ status: 401, code: 'TOKEN_EXPIRED', message: 'Token expired' });
    expect(seen).toHaveLength(1);
  });

  it('still refreshes through a separate client, as the hook should', async () => {
    const { fetch, seen } = expiredEverywhere();
    const refresher = createGovernanceClient({ baseUrl: BASE, fetch });
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: {
        jwt: 'old',
        refresh: async () =>
          (await refresher.post('/api/v1/auth/refresh', { headers: { Authorization: 'Bearer renewable' } }))
            .token,
      },
    });
    expect(await client.get('/api/v1/agents')).toEqual([]);
    expect(client.token).toBe('new');
    expect(seen.map((r) => r.headers.get('authorization'))).toEqual([
      'Bearer old',
      'Bearer renewable',
      'Bearer new',
    ]);
  });
});
