import type { Middleware } from 'openapi-fetch';

/** Who calls: a session, a key, or the SCIM token. */
export type Credentials =
  | {
      /** A session JWT (`POST /auth/login`, `/auth/mfa/login`, …), sent as `Authorization: Bearer`. */
      jwt: string;
      /**
       * Called once when a request answers 401 `TOKEN_EXPIRED` or `UNAUTHORIZED`; the request is sent again with the
       * token it resolves to (`null`: give up, the 401 is thrown). Concurrent failures share one call.
       */
      refresh?: () => Promise<string | null>;
    }
  | {
      /** A workspace key (`svc_live_…`) or an agent key (`svc_agent_…`), sent as `X-API-Key`. */
      apiKey: string;
    }
  | {
      /** The organization's SCIM token (`scim_…`), for `/scim/v2`, sent as `Authorization: Bearer`. */
      scimToken: string;
    };

/** The credentials, headers and version pin of a client, applied to every request it sends. */
export class RequestAuthority {
  private jwt: string | undefined;
  private refreshing: Promise<string | null> | null = null;

  constructor(
    readonly credentials: Credentials | undefined,
    readonly version: string | undefined,
    readonly headers: Record<string, string>,
  ) {
    this.jwt = credentials && 'jwt' in credentials ? credentials.jwt : undefined;
  }

  /** The session token in force (after a refresh, the new one). */
  get token(): string | undefined {
    return this.jwt;
  }

  /** Sets the client's headers, the version pin and the credentials on a request that does not carry its own. */
  apply(headers: Headers): void {
    for (const [name, value] of Object.entries(this.headers)) {
      if (!headers.has(name)) headers.set(name, value);
    }
    if (this.version !== undefined && !headers.has('x-svc-version'))
      headers.set('X-Svc-Version', this.version);
    if (headers.has('authorization') || headers.has('x-api-key') || !this.credentials) return;
    if ('apiKey' in this.credentials) headers.set('X-API-Key', this.credentials.apiKey);
    else if ('scimToken' in this.credentials)
      headers.set('Authorization', `Bearer ${this.credentials.scimToken}`);
    else headers.set('Authorization', `Bearer ${this.jwt}`);
  }

  get canRefresh(): boolean {
    return !!this.credentials && 'jwt' in this.credentials && typeof this.credentials.refresh === 'function';
  }

  /**
   * A fresh token after `failed` was refused: the one another request already obtained, or the refresh callback's
   * (one call at a time).
   */
  async refreshed(failed: string | undefined): Promise<string | null> {
    if (!this.credentials || !('jwt' in this.credentials) || !this.credentials.refresh) return null;
    if (failed !== undefined && this.jwt !== failed) return this.jwt ?? null;
    const refresh = this.credentials.refresh;
    this.refreshing ??= refresh().finally(() => {
      this.refreshing = null;
    });
    const token = await this.refreshing;
    if (token) this.jwt = token;
    return token;
  }

  /** The openapi-fetch middleware: headers on the way out, one refresh and retry on a 401 of an expired session. */
  middleware(): Middleware {
    const copies = new Map<string, Request>();
    return {
      onRequest: ({ request, id }) => {
        this.apply(request.headers);
        // A request's body can be read once: keep a copy to send again after a refresh.
        if (this.canRefresh && request.headers.get('authorization') === `Bearer ${this.jwt}`) {
          copies.set(id, request.clone());
        }
        return request;
      },
      onResponse: async ({ request, response, id, options }) => {
        const copy = copies.get(id);
        copies.delete(id);
        if (!copy || response.status !== 401) return undefined;
        const code = await errorCodeOf(response.clone());
        if (code !== 'TOKEN_EXPIRED' && code !== 'UNAUTHORIZED') return undefined;
        const sent = request.headers.get('authorization')?.replace(/^Bearer /, '');
        const token = await this.refreshed(sent);
        if (!token) return undefined;
        copy.headers.set('Authorization', `Bearer ${token}`);
        return options.fetch(copy);
      },
      onError: ({ id }) => {
        copies.delete(id);
        return undefined;
      },
    };
  }
}

async function errorCodeOf(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.json()) as { code?: unknown };
    return typeof body.code === 'string' ? body.code : undefined;
  } catch {
    return undefined;
  }
}
