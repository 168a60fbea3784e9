import { createServer, type Server } from 'node:http';
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
export class OidcIdp {
  private constructor(
    readonly issuer: string,
    readonly clientId: string,
    readonly clientSecret: string,
    private readonly server: Server,
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
    } as ConstructorParameters<typeof Provider>[1]);
    server.on('request', provider.callback());
    return new OidcIdp(issuer, 'governance', clientSecret, server);
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

  async close(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
  }
}
