import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SocialProvider, SocialProviderConfig } from '#platform';

/** Who the next sign-in at the provider is: its userinfo, and (GitHub) its address list. */
export interface SocialUser {
  userinfo: Record<string, unknown>;
  emails?: Array<{ email: string; primary: boolean; verified: boolean }>;
}

interface Grant {
  provider: string;
  user: SocialUser;
  redirectUri: string;
  challenge: string;
}

/**
 * A local OAuth 2 provider that plays GitHub, Google and Microsoft through the services' endpoint overrides
 * (`/<provider>/authorize`, `/token`, `/userinfo`, `/emails`). The authorization step signs in `next` at once
 * and records what it was asked (to check scopes and prompts); the token step checks the client secret, the
 * redirect URI and the PKCE verifier, and takes a code once.
 */
export class LocalOAuthProvider {
  next: SocialUser = { userinfo: {} };
  readonly authorizations: URL[] = [];
  private readonly codes = new Map<string, Grant>();
  private readonly tokens = new Map<string, SocialUser>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<LocalOAuthProvider> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const provider = new LocalOAuthProvider(
      server,
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    );
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url!, provider.url);
        const [, name, step] = url.pathname.split('/');
        const json = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        };
        if (step === 'authorize') {
          provider.authorizations.push(url);
          const code = randomBytes(16).toString('hex');
          provider.codes.set(code, {
            provider: name!,
            user: provider.next,
            redirectUri: url.searchParams.get('redirect_uri')!,
            challenge: url.searchParams.get('code_challenge') ?? '',
          });
          const back = new URL(url.searchParams.get('redirect_uri')!);
          back.searchParams.set('code', code);
          back.searchParams.set('state', url.searchParams.get('state') ?? '');
          res.writeHead(302, { location: back.href }).end();
          return;
        }
        if (step === 'token') {
          const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
          const grant = provider.codes.get(form.get('code') ?? '');
          provider.codes.delete(form.get('code') ?? '');
          const verifier = form.get('code_verifier') ?? '';
          const challenge = createHash('sha256').update(verifier).digest('base64url');
          if (
            !grant ||
            grant.provider !== name ||
            form.get('client_secret') !== `${name}-secret` ||
            form.get('redirect_uri') !== grant.redirectUri ||
            challenge !== grant.challenge
          ) {
            return json(400, { error: 'invalid_grant' });
          }
          const token = randomBytes(16).toString('hex');
          provider.tokens.set(token, grant.user);
          return json(200, { access_token: token, token_type: 'bearer' });
        }
        const user = provider.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
        if (!user) return json(401, { error: 'invalid_token' });
        if (step === 'userinfo') return json(200, user.userinfo);
        if (step === 'emails') return json(200, user.emails ?? []);
        json(404, {});
      });
    });
    return provider;
  }

  /** The service's settings for `name`, pointed at this provider. */
  settings(name: SocialProvider): SocialProviderConfig {
    const base = `${this.url}/${name}`;
    return {
      clientId: `${name}-client`,
      clientSecret: `${name}-secret`,
      authorizationUrl: `${base}/authorize`,
      tokenUrl: `${base}/token`,
      userinfoUrl: `${base}/userinfo`,
      ...(name === 'github' ? { emailsUrl: `${base}/emails` } : {}),
      scope: name === 'github' ? 'read:user user:email' : 'openid email profile',
    };
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
  }
}
