import type { Middleware } from 'openapi-fetch';

/** Who calls: a session, a key, or the SCIM token. */
export type Credentials =
  | {
      /** A session JWT (`POST /auth/login`, `/auth/mfa/login`, …), sent as `Authorization: Bearer`. */
      jwt: string;
      /**
       * Called once when a request answers 401 `TOKEN_EXPIRED` or `UNAUTHORIZED`; the request is sent again with the
       * token it resolves to (`null`: give up, the 401 is thrown). Concurrent failures share one call. A hook that
       * rejects gives up too: the request's 401 is thrown.
       *
       * Make its requests with another client (an anonymous `createGovernanceClient({ baseUrl })`) or plain `fetch`:
       * the requests this client sends while the hook runs, and its session routes (`/auth/refresh`, `/auth/login`,
       * `/auth/mfa/login`, …, `SESSION_ROUTES`), are never refreshed, so that a hook calling this client ends with
       * the 401 rather than waiting on itself.
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

/**
 * The routes that open, renew, switch or end a session: a 401 there is the answer itself (wrong password, a token
 * that cannot be renewed), never a reason to refresh.
 */
export const SESSION_ROUTES: ReadonlySet<string> = new Set([
  '/api/v1/auth/refresh',
  '/api/v1/auth/login',
  '/api/v1/auth/mfa/login',
  '/api/v1/auth/mfa/resend',
  '/api/v1/auth/register',
  '/api/v1/auth/logout',
  '/api/v1/auth/switch-org',
  '/api/v1/auth/magic-link',
  '/api/v1/auth/magic-link/verify',
  '/api/v1/auth/oauth-token',
  '/api/v1/auth/passkeys/authentication/options',
  '/api/v1/auth/passkeys/authentication/verify',
  '/api/v1/auth/sso/initiate',
  '/api/v1/auth/sso/callback',
  '/api/v1/auth/sso/mfa-exchange',
  '/api/v1/auth/complete-signup',
  '/api/v1/auth/request-signup',
  '/api/v1/auth/forgot-password',
  '/api/v1/auth/reset-password',
  '/api/v1/auth/verify-email',
  '/api/v1/auth/resend-verification',
]);

/**
 * A redirect the client refused to follow. Requests are sent with `redirect: 'manual'`: following one would send the
 * request (its body, and any header a fetch does not strip, `X-API-Key` included) to wherever the `Location` points.
 * Point `baseUrl` at the address that answers.
 */
export class RedirectRefusedError extends Error {
  override readonly name = 'RedirectRefusedError';

  constructor(
    /** The redirect's status (0 in a browser, which hides it). */
    readonly status: number,
    /** Its `Location`, when the runtime shows it. */
    readonly location: string | undefined,
    /** The request that was redirected. */
    readonly url: string,
  ) {
    super(
      `${url} answered a redirect (${status || 'opaque'}${location ? ` to ${location}` : ''}), which the client ` +
        'does not follow, so that its credentials go nowhere else: set baseUrl to the address that answers',
    );
  }
}

/** Whether a response is a redirect (`redirect: 'manual'`: the 3xx itself in Node, an opaque one in browsers). */
function isRedirect(response: Response): boolean {
  return (
    response.type === 'opaqueredirect' ||
    (response.status >= 300 && response.status < 400 && response.status !== 304)
  );
}

/** The origin of a URL (resolved against the page's in a browser), or undefined. */
export function originOf(url: string): string | undefined {
  try {
    const base = (globalThis as { location?: { href?: string } }).location?.href;
    return new URL(url, base).origin;
  } catch {
    return undefined;
  }
}

/** The credentials, headers and version pin of a client, applied to every request it sends. */
export class RequestAuthority {
  private jwt: string | undefined;
  private refreshing: Promise<string | null> | null = null;
  private readonly origin: string | undefined;

  constructor(
    readonly credentials: Credentials | undefined,
    readonly version: string | undefined,
    readonly headers: Record<string, string>,
    /** The client's `baseUrl`: credentials go to its origin only. */
    readonly baseUrl: string,
  ) {
    this.jwt = credentials && 'jwt' in credentials ? credentials.jwt : undefined;
    this.origin = originOf(baseUrl);
  }

  /** The session token in force (after a refresh, the new one). */
  get token(): string | undefined {
    return this.jwt;
  }

  /** Whether credentials may go to this URL: only to the origin of the client's `baseUrl`. */
  trusts(url: string): boolean {
    return this.origin !== undefined && originOf(url) === this.origin;
  }

  /**
   * Sets the client's headers and the version pin on a request, and the credentials when it goes to the client's
   * origin (a call's own `baseUrl` may point elsewhere) and does not carry its own. Returns whether it set them.
   */
  apply(headers: Headers, url: string): boolean {
    for (const [name, value] of Object.entries(this.headers)) {
      if (!headers.has(name)) headers.set(name, value);
    }
    if (this.version !== undefined && !headers.has('x-svc-version'))
      headers.set('X-Svc-Version', this.version);
    if (headers.has('authorization') || headers.has('x-api-key') || !this.credentials) return false;
    if (!this.trusts(url)) return false;
    if ('apiKey' in this.credentials) headers.set('X-API-Key', this.credentials.apiKey);
    else if ('scimToken' in this.credentials)
      headers.set('Authorization', `Bearer ${this.credentials.scimToken}`);
    else headers.set('Authorization', `Bearer ${this.jwt}`);
    return true;
  }

  get canRefresh(): boolean {
    return !!this.credentials && 'jwt' in this.credentials && typeof this.credentials.refresh === 'function';
  }

  /** Whether the refresh callback is running. */
  get isRefreshing(): boolean {
    return this.refreshing !== null;
  }

  /**
   * A fresh token after `failed` was refused: the one another request already obtained, or the refresh callback's
   * (one call at a time). Rejects when the callback does.
   */
  async refreshed(failed: string | undefined): Promise<string | null> {
    if (!this.credentials || !('jwt' in this.credentials) || !this.credentials.refresh) return null;
    if (failed !== undefined && this.jwt !== failed) return this.jwt ?? null;
    const refresh = this.credentials.refresh;
    // Called a microtask later, once `refreshing` is set: the requests the callback sends are seen as sent during
    // the refresh (and so never wait for it), and a callback that throws at once rejects like one that fails later.
    this.refreshing ??= Promise.resolve()
      .then(() => refresh())
      .finally(() => {
        this.refreshing = null;
      });
    const token = await this.refreshing;
    if (token) this.jwt = token;
    return token;
  }

  /**
   * The openapi-fetch middleware: headers on the way out, redirects refused, and one refresh and retry on a 401 of an
   * expired session.
   */
  middleware(): Middleware {
    /** Copies of requests that may be sent again after a refresh, and whether a refresh ran when they were sent. */
    const copies = new Map<string, { copy: Request; duringRefresh: boolean }>();
    return {
      onRequest: ({ request, id, schemaPath }) => {
        // Never `follow`: a redirect elsewhere would take the request, and the key, with it (fetch strips only
        // Authorization from a cross-origin redirect).
        const sent =
          request.redirect === 'manual' || request.redirect === 'error'
            ? request
            : new Request(request, { redirect: 'manual' });
        const attached = this.apply(sent.headers, sent.url);
        // A request's body can be read once: keep a copy to send again after a refresh.
        if (
          attached &&
          this.canRefresh &&
          !SESSION_ROUTES.has(schemaPath) &&
          sent.headers.get('authorization') === `Bearer ${this.jwt}`
        ) {
          copies.set(id, { copy: sent.clone(), duringRefresh: this.isRefreshing });
        }
        return sent;
      },
      onResponse: async ({ request, response, id, options }) => {
        const kept = copies.get(id);
        copies.delete(id);
        if (isRedirect(response)) {
          throw new RedirectRefusedError(
            response.status,
            response.headers.get('location') ?? undefined,
            request.url,
          );
        }
        if (!kept || response.status !== 401) return undefined;
        const code = await errorCodeOf(response.clone());
        if (code !== 'TOKEN_EXPIRED' && code !== 'UNAUTHORIZED') return undefined;
        const sent = request.headers.get('authorization')?.replace(/^Bearer /, '');
        let token: string | null;
        if (kept.duringRefresh) {
          // Sent while a refresh ran (perhaps by the refresh callback itself): waiting for that refresh could be
          // waiting for itself. Sent again only if a new token is in force already.
          if (this.jwt === undefined || this.jwt === sent) return undefined;
          token = this.jwt;
        } else {
          try {
            token = await this.refreshed(sent);
          } catch {
            // The callback failed: the request's own 401 is the answer.
            return undefined;
          }
        }
        if (!token) return undefined;
        kept.copy.headers.set('Authorization', `Bearer ${token}`);
        const again = await options.fetch(kept.copy);
        if (isRedirect(again)) {
          throw new RedirectRefusedError(
            again.status,
            again.headers.get('location') ?? undefined,
            request.url,
          );
        }
        return again;
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
