import createClient from 'openapi-fetch';
import { type Credentials, RequestAuthority } from './credentials.js';
import { Download } from './download.js';
import { GovernanceError } from './errors.js';
import { type RetryOptions, validateRetry } from './retry.js';
import {
  type EventSubscription,
  subscribe,
  type SubscribeOptions,
  type WebSocketConstructor,
} from './stream.js';
import { sendTrace, type SendTraceOptions, type TraceInput, type TraceResult } from './traces.js';
import type {
  ApiClient,
  CallInit,
  HttpMethod,
  InitArgs,
  Page,
  PageItem,
  PaginatedPath,
  Pagination,
  paths,
  PathsWith,
  ResultOf,
} from './types.js';

/** A fetch that takes a `Request` (the global `fetch` is one). */
export type FetchFunction = (request: Request) => Promise<Response>;

export interface GovernanceClientOptions {
  /**
   * Where the service is, e.g. `https://governance.example.com` (the paths begin with `/api/v1`). The credentials are
   * sent to this origin only (a call's own `baseUrl` elsewhere goes without them), and redirects are not followed.
   */
  baseUrl: string;
  /** None for the public routes (sign-up, login); see `withCredentials`. */
  credentials?: Credentials;
  /** `X-Svc-Version: YYYY-MM-DD`, the schema version to pin (default: the latest). */
  version?: string;
  /** A fetch of your own (tests, proxies, instrumentation). */
  fetch?: FetchFunction;
  /** Headers sent with every request (to whatever origin it goes: put no secret here, use `credentials`). */
  headers?: Record<string, string>;
  /** How `sendTrace` retries (default: 5 attempts from 250 ms, at most 30 s apart); `TypeError` if not usable. */
  retry?: RetryOptions;
  /** A WebSocket class for `transport: 'websocket'` where there is no global one (Node 20: the ws package's). */
  WebSocket?: WebSocketConstructor;
}

/** `client.get(path, init)` and its siblings: openapi-fetch's typed call, answering the envelope's `data`. */
export type CallMethod<M extends HttpMethod> = <P extends PathsWith<M>, Init extends CallInit<P, M>>(
  path: P,
  ...init: InitArgs<Init>
) => Promise<ResultOf<P, M, Init>>;

export interface GovernanceClient {
  /** The openapi-fetch client over the document's paths, with the credentials and version applied. */
  readonly api: ApiClient;
  readonly baseUrl: string;
  /** The session token in force (after a refresh, the new one). */
  readonly token: string | undefined;
  get: CallMethod<'get'>;
  post: CallMethod<'post'>;
  put: CallMethod<'put'>;
  patch: CallMethod<'patch'>;
  delete: CallMethod<'delete'>;
  /** One page of a list: its items and `pagination`. */
  page<P extends PaginatedPath, Init extends CallInit<P, 'get'>>(
    path: P,
    ...init: InitArgs<Init>
  ): Promise<Page<PageItem<P>>>;
  /** Every item of a list, page by page (from `query.page`, default 1; `query.limit` sets the page size). */
  paginate<P extends PaginatedPath, Init extends CallInit<P, 'get'>>(
    path: P,
    ...init: InitArgs<Init>
  ): AsyncIterableIterator<PageItem<P>>;
  /** A file (the compliance PDF, the NDJSON audit export): bytes, text, a stream or NDJSON lines. */
  download<P extends PathsWith<'get'>, Init extends CallInit<P, 'get'>>(
    path: P,
    ...init: InitArgs<Init>
  ): Promise<Download>;
  /** `POST /traces` with an idempotency key and retries; resolves to the verdict. */
  sendTrace(body: TraceInput, options?: SendTraceOptions): Promise<TraceResult>;
  readonly events: {
    /** The organization's live events (SSE or WebSocket), reconnecting with the last event's id. */
    subscribe(options?: SubscribeOptions): EventSubscription;
  };
  /** The same client with other credentials (none: anonymous). */
  withCredentials(credentials: Credentials | undefined): GovernanceClient;
}

type LooseInit = Record<string, unknown> & { params?: { query?: Record<string, unknown> } };
type LooseRequest = (
  method: HttpMethod,
  path: string,
  init?: LooseInit,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** The typed client of the governance service. */
export function createGovernanceClient(options: GovernanceClientOptions): GovernanceClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  validateRetry(options.retry);
  const authority = new RequestAuthority(
    options.credentials,
    options.version,
    options.headers ?? {},
    baseUrl,
  );
  // `manual`, and the middleware refuses what comes back: a redirect is never followed (see RedirectRefusedError).
  const api = createClient<paths>({
    baseUrl,
    redirect: 'manual',
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  api.use(authority.middleware());
  const request = api.request as unknown as LooseRequest;

  async function call(method: HttpMethod, path: string, init?: LooseInit): Promise<unknown> {
    const { data, error, response } = await request(method, path, init);
    if (!response.ok) throw GovernanceError.from(response, error);
    return unwrap(data);
  }

  async function page(path: string, init?: LooseInit): Promise<Page<unknown>> {
    const { data, error, response } = await request('get', path, init);
    if (!response.ok) throw GovernanceError.from(response, error);
    const body = data as { data?: unknown; pagination?: Pagination } | undefined;
    if (!body || !Array.isArray(body.data) || !body.pagination) {
      throw new TypeError(`${path} did not answer a page ({data: [], pagination})`);
    }
    return { items: body.data, pagination: body.pagination };
  }

  async function* paginate(path: string, init: LooseInit = {}): AsyncIterableIterator<unknown> {
    const query = init.params?.query ?? {};
    let current = Number(query.page ?? 1);
    for (;;) {
      const { items, pagination } = await page(path, {
        ...init,
        params: { ...init.params, query: { ...query, page: current } },
      });
      yield* items;
      // A capped total (the audit log with filters) is a lower bound: a full page means there may be more.
      const more =
        current < pagination.totalPages ||
        (pagination.totalCapped === true && items.length >= pagination.limit);
      if (!more || items.length === 0) return;
      current += 1;
    }
  }

  async function download(path: string, init?: LooseInit): Promise<Download> {
    const { error, response } = await request('get', path, { ...init, parseAs: 'stream' });
    if (!response.ok) throw GovernanceError.from(response, error);
    return new Download(response);
  }

  const method =
    <M extends HttpMethod>(name: M) =>
    (path: string, init?: LooseInit) =>
      call(name, path, init);

  return {
    api,
    baseUrl,
    get token() {
      return authority.token;
    },
    get: method('get') as unknown as CallMethod<'get'>,
    post: method('post') as unknown as CallMethod<'post'>,
    put: method('put') as unknown as CallMethod<'put'>,
    patch: method('patch') as unknown as CallMethod<'patch'>,
    delete: method('delete') as unknown as CallMethod<'delete'>,
    page: page as unknown as GovernanceClient['page'],
    paginate: paginate as unknown as GovernanceClient['paginate'],
    download: download as unknown as GovernanceClient['download'],
    sendTrace: (body, sendOptions) => sendTrace({ api, retry: options.retry }, body, sendOptions),
    events: {
      subscribe: (subscribeOptions) =>
        subscribe({ api, baseUrl, WebSocket: options.WebSocket }, subscribeOptions),
    },
    withCredentials: (credentials) => createGovernanceClient({ ...options, credentials }),
  };
}

/** The envelope's `data`; any other body as it is. */
function unwrap(body: unknown): unknown {
  if (typeof body === 'object' && body !== null && (body as { success?: unknown }).success === true) {
    return (body as { data?: unknown }).data;
  }
  return body;
}
