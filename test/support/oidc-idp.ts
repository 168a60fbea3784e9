import { createHmac, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** An account of the test IdP: its id is what the login form takes. */
export interface IdpAccount {
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

/**
 * The real `oidc-provider` on loopback, as an organization's OIDC identity provider: one confidential client, the
 * given accounts, and the claims the service reads put in the ID token. `login` plays a browser through its
 * development login and consent pages (a cookie jar, redirects followed by hand) and returns the URL the IdP sends
 * the browser back to.
 */
/** How the next ID tokens are altered on their way out of the token endpoint (the IdP's key re-signs them). */
export type IdTokenTamper = 'audience' | 'alg-none' | 'alg-hs256' | undefined;

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export class OidcIdp {
  /** Set by a test to alter the ID tokens the token endpoint returns, as a hostile or broken IdP would. */
  tamper: IdTokenTamper;

  private constructor(
    readonly issuer: string,
    readonly clientId: string,
    readonly clientSecret: string,
    private readonly server: Server,
    private readonly signingKey: KeyObject,
  ) {}

  static async start(options: {
    redirectUri: string;
    accounts: Record<string, IdpAccount>;
    clientSecret?: string;
  }): Promise<OidcIdp> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const clientSecret = options.clientSecret ?? 'oidc-client-secret-do-not-echo';
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-idp-key', use: 'sig', alg: 'RS256' };
    const provider = new Provider(issuer, {
      clients: [
        { client_id: 'governance', client_secret: clientSecret, redirect_uris: [options.redirectUri] },
      ],
      findAccount: (_ctx: unknown, id: string) => {
        const account = options.accounts[id];
        return account ? { accountId: id, claims: () => ({ sub: id, ...account }) } : undefined;
      },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
      conformIdTokenClaims: false,
      cookies: { keys: ['oidc-test-cookie-key'] },
      jwks: { keys: [jwk] },
    } as ConstructorParameters<typeof Provider>[1]);
    const idp = new OidcIdp(issuer, 'governance', clientSecret, server, privateKey);
    const handle = provider.callback();
    server.on('request', (req, res) => {
      if (idp.tamper && req.method === 'POST' && req.url?.startsWith('/token')) idp.rewriteIdToken(res);
      handle(req, res);
    });
    return idp;
  }

  /** Signs `account` in at the IdP from `authorizationUrl`; the URL of the redirect back to `redirectUri`. */
  async login(authorizationUrl: string, account: string, redirectUri: string): Promise<URL> {
    const jar = new Map<string, string>();
    let url = authorizationUrl;
    let body: string | undefined;
    for (let hop = 0; hop < 12; hop++) {
      const res = await fetch(url, {
        method: body ? 'POST' : 'GET',
        body,
        redirect: 'manual',
        headers: {
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
      });
      for (const cookie of res.headers.getSetCookie()) {
        const pair = cookie.split(';')[0]!;
        jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
      const location = res.headers.get('location');
      if (location) {
        const next = new URL(location, url);
        if (next.href.startsWith(redirectUri)) return next;
        url = next.href;
        body = undefined;
        continue;
      }
      const html = await res.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      const action = /action="([^"]+)"/.exec(html)?.[1];
      if (!prompt || !action) throw new Error(`Unexpected IdP page (${res.status}): ${html.slice(0, 200)}`);
      body = prompt === 'login' ? `prompt=login&login=${encodeURIComponent(account)}` : 'prompt=consent';
      url = new URL(action, url).href;
    }
    throw new Error('The IdP did not send the browser back');
  }

  /** Rewrites the ID token in the token endpoint's JSON answer as `tamper` says, before it is sent. */
  private rewriteIdToken(res: ServerResponse): void {
    const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
    res.end = ((chunk?: unknown) => {
      const text = Buffer.isBuffer(chunk) ? chunk.toString('utf8') : typeof chunk === 'string' ? chunk : '';
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return end(chunk);
      }
      if (typeof body.id_token === 'string') body.id_token = this.altered(body.id_token);
      const out = JSON.stringify(body);
      res.setHeader('content-length', Buffer.byteLength(out));
      return end(out);
    }) as typeof res.end;
  }

  private altered(idToken: string): string {
    const [header, payload] = idToken
      .split('.')
      .slice(0, 2)
      .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>);
    switch (this.tamper) {
      case 'audience': {
        const input = `${b64url(header)}.${b64url({ ...payload, aud: 'another-client' })}`;
        return `${input}.${sign('sha256', Buffer.from(input), this.signingKey).toString('base64url')}`;
      }
      case 'alg-none':
        return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;
      case 'alg-hs256': {
        // Signed with the client secret, which the client knows: an algorithm the client did not register.
        const input = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url(payload)}`;
        return `${input}.${createHmac('sha256', this.clientSecret).update(input).digest('base64url')}`;
      }
      default:
        return idToken;
    }
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
  }
}
