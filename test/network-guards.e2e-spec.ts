import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import dns2 from 'dns2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssoDomains } from '../libs/identity/src/sso/sso.schema.js';
import { DnsResolver, pinnedFetch, SsrfRefusal } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { cookieValue, setCookies } from './support/cookies.js';
import { OidcIdp } from './support/oidc-idp.js';

const { Packet } = dns2;
/** The NXDOMAIN response code (RFC 1035 §4.1.1), which the typings of dns2 3.0 do not list. */
const NXDOMAIN = 3;

/** A public address the guard accepts. No connection may ever be made to it: the tests fail before one would be. */
const PUBLIC_ADDRESS = '93.184.216.34';

/**
 * A DNS server on 127.0.0.1 with a scripted zone: each name answers, query after query, the next address of its
 * list (the last one repeated), and no AAAA records. Counts the A queries per name.
 */
class ScriptedDns {
  private constructor(
    private readonly server: ReturnType<typeof dns2.createUDPServer>,
    readonly port: number,
    /** A queries per name since its last `script`. */
    readonly queries: Map<string, number>,
    private readonly zone: Map<string, string[]>,
  ) {}

  static async start(): Promise<ScriptedDns> {
    const queries = new Map<string, number>();
    const zone = new Map<string, string[]>();
    const server = dns2.createUDPServer((request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question?.name.toLowerCase() ?? '';
      const answers = zone.get(name);
      if (!question || !answers) {
        response.header.rcode = NXDOMAIN;
      } else if (question.type === Packet.TYPE.A) {
        const seen = queries.get(name) ?? 0;
        queries.set(name, seen + 1);
        response.answers.push(
          Packet.createResourceFromQuestion(question, {
            ttl: 0,
            address: answers[Math.min(seen, answers.length - 1)]!,
          }),
        );
      }
      void send(response);
    });
    await server.listen(0, '127.0.0.1');
    return new ScriptedDns(server, (server.address() as AddressInfo).port, queries, zone);
  }

  /** `name` answers these addresses in turn from now on (the last one repeated); its query count starts again. */
  script(name: string, ...addresses: string[]): void {
    this.zone.set(name, addresses);
    this.queries.set(name, 0);
  }

  get servers(): string[] {
    return [`127.0.0.1:${this.port}`];
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** An HTTP listener on loopback that records every request it receives. */
class LoopbackListener {
  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly requests: IncomingMessage[],
  ) {}

  static async start(): Promise<LoopbackListener> {
    const requests: IncomingMessage[] = [];
    const server = createServer((req, res) => {
      requests.push(req);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"reached":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new LoopbackListener(server, (server.address() as AddressInfo).port, requests);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('outbound calls to identity providers are pinned to the address the guard checked', () => {
  let dns: ScriptedDns;
  let listener: LoopbackListener;
  let ctx: TestContext;
  let owner: Registered;

  beforeAll(async () => {
    dns = await ScriptedDns.start();
    listener = await LoopbackListener.start();
    ctx = await TestContext.create({
      config: { ssoAllowInsecureHttp: true, ssoAllowPrivateNetworks: false, ssoDnsServers: dns.servers },
    });
    owner = await ctx.register({ organizationName: 'Rebinding target' });
    await ctx.setPlan(owner.organization.id, 'governance');
    const put = await ctx.request('PUT', '/api/v1/sso/config', {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: ['rebind-corp.example'],
        oidc: {
          issuer: `http://rebind.test:${listener.port}`,
          clientId: 'governance',
          clientSecret: 'rebind-client-secret',
        },
      },
    });
    expect(put.statusCode, put.body).toBe(200);
  });
  afterAll(async () => {
    await ctx?.close();
    await listener?.close();
    await dns?.close();
  });

  it('connects to the address its one resolution through SSO_DNS_SERVERS gave, with the name as Host', async () => {
    // The name answers 127.0.0.1, then 127.0.0.2, where nothing listens: a second resolution would miss.
    dns.script('pinned.test', '127.0.0.1', '127.0.0.2');
    const fetch = pinnedFetch({ resolver: new DnsResolver(dns.servers), allowPrivate: true });
    const res = await fetch(`http://pinned.test:${listener.port}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ reached: true });
    expect(dns.queries.get('pinned.test')).toBe(1);
    expect(listener.requests).toHaveLength(1);
    expect(listener.requests[0]!.headers.host).toBe(`pinned.test:${listener.port}`);
    listener.requests.length = 0;
  });

  it('refuses a name that resolves to loopback, and a loopback literal, without connecting', async () => {
    dns.script('inside.test', '127.0.0.1');
    const fetch = pinnedFetch({ resolver: new DnsResolver(dns.servers), allowPrivate: false });
    const named = await fetch(`http://inside.test:${listener.port}/`).catch((e: unknown) => e);
    expect(named).toBeInstanceOf(SsrfRefusal);
    expect((named as Error).message).toBe(
      'inside.test resolves to a loopback, private, link-local or reserved address',
    );
    for (const literal of ['127.0.0.1', '[::ffff:7f00:1]', '[::127.0.0.1]', '[2002:7f00:1::1]']) {
      const err = await fetch(`http://${literal}:${listener.port}/`).catch((e: unknown) => e);
      expect(err, literal).toBeInstanceOf(SsrfRefusal);
    }
    expect(listener.requests).toHaveLength(0);
  });

  it('POST /sso/config/test: the issuer answers a public address to the check and loopback next; nothing reaches loopback', async () => {
    dns.script('rebind.test', PUBLIC_ADDRESS, '127.0.0.1');
    const res = await ctx.post('/api/v1/sso/config/test', { token: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      ok: false,
      checks: [
        { name: 'issuer_address', ok: true, detail: 'rebind.test resolves to an allowed address' },
        {
          name: 'discovery',
          ok: false,
          detail: 'rebind.test resolves to a loopback, private, link-local or reserved address',
        },
      ],
    });
    // The check's resolution, then the connection's own: no third one, and no address in any detail.
    expect(dns.queries.get('rebind.test')).toBe(2);
    expect(res.body).not.toContain('127.0.0.1');
    expect(res.body).not.toContain(PUBLIC_ADDRESS);
    expect(listener.requests).toHaveLength(0);
  });

  it('the sign-in dispatcher: discovery after a rebinding answers "unavailable" and reaches nothing', async () => {
    // The domain routes to the organization (as a verified domain does).
    await ctx.db.db
      .insert(ssoDomains)
      .values({ domain: 'rebind-corp.example', organizationId: owner.organization.id, createdAt: new Date() })
      .onConflictDoNothing();
    dns.script('rebind.test', PUBLIC_ADDRESS, '127.0.0.1');
    const res = await ctx.post('/api/v1/auth/sso/initiate', {
      body: { email: 'someone@rebind-corp.example' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ redirectUrl: `${ctx.config.appUrl}/login?sso=unavailable` });
    expect(dns.queries.get('rebind.test')).toBe(2);
    expect(listener.requests).toHaveLength(0);

    // Every answer loopback: refused at the first check, before any connection.
    dns.script('rebind.test', '127.0.0.1');
    const again = await ctx.post('/api/v1/auth/sso/initiate', {
      body: { email: 'other@rebind-corp.example' },
    });
    expect(again.json().data).toEqual({ redirectUrl: `${ctx.config.appUrl}/login?sso=unavailable` });
    expect(dns.queries.get('rebind.test')).toBe(1);
    expect(listener.requests).toHaveLength(0);
  });
});

describe('the token and JWKS requests of a sign-in go through the pinned fetch too', () => {
  let ctx: TestContext;
  let idp: OidcIdp;
  let redirectUri: string;

  beforeAll(async () => {
    ctx = await TestContext.create({ config: { ssoAllowInsecureHttp: true, ssoAllowPrivateNetworks: true } });
    redirectUri = `${ctx.config.publicUrl}/api/v1/auth/sso/callback`;
    idp = await OidcIdp.start({
      redirectUri,
      accounts: { pat: { email: 'pat@pinned-corp.example', email_verified: true, name: 'Pat' } },
    });
    const owner = await ctx.register({ organizationName: 'Pinned corp' });
    await ctx.setPlan(owner.organization.id, 'governance');
    const put = await ctx.request('PUT', '/api/v1/sso/config', {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: ['pinned-corp.example'],
        oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    await ctx.db.db
      .insert(ssoDomains)
      .values({ domain: 'pinned-corp.example', organizationId: owner.organization.id, createdAt: new Date() })
      .onConflictDoNothing();
  });
  afterAll(async () => {
    if (ctx) ctx.config.ssoAllowPrivateNetworks = true;
    await ctx?.close();
    await idp?.close();
  });

  /** A sign-in up to the IdP's return; `between` runs after discovery (cached) and before the token exchange. */
  async function signIn(between: () => void) {
    const started = await ctx.post('/api/v1/auth/sso/initiate', {
      body: { email: 'pat@pinned-corp.example' },
    });
    expect(started.statusCode, started.body).toBe(200);
    const { redirectUrl } = started.json().data as { redirectUrl: string };
    expect(redirectUrl.startsWith(`${idp.issuer}/auth?`)).toBe(true);
    const binding = cookieValue(setCookies(started).get('svc_sso_binding'))!;
    const back = await idp.login(redirectUrl, 'pat', redirectUri);
    between();
    return ctx.request('GET', `/api/v1/auth/sso/callback${back.search}`, {
      headers: { cookie: `svc_sso_binding=${encodeURIComponent(binding)}` },
    });
  }

  it('checks the token endpoint as it connects, not only when the configuration was discovered', async () => {
    // Discovery passed while private networks were allowed; by the token exchange they no longer are.
    const refused = await signIn(() => (ctx.config.ssoAllowPrivateNetworks = false));
    expect(refused.statusCode, refused.body).toBe(302);
    expect(refused.headers.location).toBe(`${ctx.config.appUrl}/login?error=sso_failed`);
    expect(setCookies(refused).has('svc_oauth_token')).toBe(false);

    ctx.config.ssoAllowPrivateNetworks = true;
    const signedIn = await signIn(() => undefined);
    expect(signedIn.statusCode, signedIn.body).toBe(302);
    expect(signedIn.headers.location).toBe(`${ctx.config.appUrl}/auth/callback`);
    expect(setCookies(signedIn).has('svc_oauth_token')).toBe(true);
  });
});

describe('the SSRF guard refuses every IPv6 form that embeds an IPv4 address (webhook creation)', () => {
  let ctx: TestContext;
  let owner: Registered;
  beforeAll(async () => {
    ctx = await TestContext.create({ config: { webhookAllowPrivateNetworks: false } });
    owner = await ctx.register({ organizationName: 'IPv6 forms' });
  });
  afterAll(async () => ctx?.close());

  it.each([
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::ffff:0:a00:1', 'IPv4-translated'],
    ['64:ff9b::a9fe:a9fe', 'NAT64'],
    ['64:ff9b:1::808:808', 'local-use NAT64 (64:ff9b:1::/48)'],
    ['::7f00:1', 'IPv4-compatible (::/96)'],
    ['::8.8.8.8', 'IPv4-compatible (::/96), public inside'],
    ['2002:7f00:1::1', '6to4 (2002::/16)'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo (2001::/32)'],
  ])('refuses http://[%s]/ (%s) with 400 WEBHOOK_URL_NOT_ALLOWED', async (address) => {
    const res = await ctx.post('/api/v1/webhooks', {
      token: owner.token,
      body: { url: `http://[${address}]/hook`, events: ['trace.flagged'] },
    });
    const body = expectErrorEnvelope(res, 400, 'WEBHOOK_URL_NOT_ALLOWED');
    expect(body.details).toEqual([
      { field: 'url', message: expect.stringMatching(/loopback, private, link-local or reserved address$/) },
    ]);
  });

  it('names the host of a refused name, never the address it resolved to', async () => {
    const res = await ctx.post('/api/v1/webhooks', {
      token: owner.token,
      body: { url: 'http://localhost:8080/hook', events: ['trace.flagged'] },
    });
    const body = expectErrorEnvelope(res, 400, 'WEBHOOK_URL_NOT_ALLOWED');
    expect(body.error).toBe('localhost resolves to a loopback, private, link-local or reserved address');
    expect(res.body).not.toMatch(/127\.0\.0\.1|::1/);
  });
});

describe('TRUST_PROXY as a hop count', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({
      config: { trustProxy: 1, authRateLimit: { max: 3, windowMs: 15 * 60_000 } },
    });
  });
  afterAll(async () => ctx?.close());

  /** A request through the one proxy (127.0.0.1), which appends the address it received the request from. */
  const viaProxy = (client: string, forgedChain?: string) =>
    ctx.app.inject({
      method: 'GET',
      url: '/api/v1/auth/me',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': forgedChain ? `${forgedChain}, ${client}` : client },
    });

  it('counts the address the proxy appended: a forged X-Forwarded-For chain gets no fresh limiter bucket', async () => {
    const client = '198.18.7.7';
    for (let i = 0; i < 3; i++) {
      const res = await viaProxy(client, `203.0.113.${i + 1}, 10.9.8.${i + 1}`);
      expect(res.statusCode, res.body).toBe(401);
    }
    const refused = await viaProxy(client, '192.0.2.200');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      success: false,
      error: expect.any(String),
      code: 'RATE_LIMIT_EXCEEDED',
    });
    // Another client behind the same proxy has a bucket of its own.
    expect((await viaProxy('198.18.9.9')).statusCode).toBe(401);
  });

  it('records the client the proxy saw, not the forged one, on a login', async () => {
    const reg = await ctx.register();
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: '127.0.0.1',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '1.2.3.4, 198.51.100.77' },
      payload: JSON.stringify({ email: reg.user.email, password: reg.password }),
    });
    expect(res.statusCode, res.body).toBe(200);
    const audit = await ctx.get('/api/v1/audit', { token: reg.token, query: { eventType: 'auth.login' } });
    expect(audit.json().data[0].ip).toBe('198.51.100.77');
  });
});
