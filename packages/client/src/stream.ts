import { GovernanceError } from './errors.js';
import { type GovernanceEvent, toGovernanceEvent } from './events.js';
import { sleep } from './retry.js';
import { SseParser } from './sse.js';
import type { ApiClient } from './types.js';

/**
 * What the client needs of a WebSocket: the browser's, Node's (22 and later) or the `ws` package's. Declared here so
 * that the client does not depend on DOM types.
 */
export interface WebSocketLike {
  readonly readyState: number;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'open' | 'error', listener: (event: unknown) => void): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface ReconnectOptions {
  /**
   * The delay before reconnecting after a drop (default: what the server's `retry:` line said, 3 s, else 1 s),
   * doubled for each failed attempt in a row, with ±20 % jitter; at least what a 503's `Retry-After` asks.
   */
  initialDelayMs?: number;
  /** The longest delay between two attempts (default 30 s). */
  maxDelayMs?: number;
  /**
   * Failed attempts in a row (no connection) after which the iteration throws the last error (default: no limit).
   * A connection that opens resets the count.
   */
  maxAttempts?: number;
}

export interface SubscribeOptions {
  /** Replay the events after this id first (the last id you processed), then go live. */
  lastEventId?: string;
  /** `sse` (default, over fetch) or `websocket` (needs `globalThis.WebSocket` or the client's `WebSocket` option). */
  transport?: 'sse' | 'websocket';
  /** Ends the iteration (and the connection). */
  signal?: AbortSignal;
  reconnect?: ReconnectOptions;
  /** SSE: reconnect when nothing, not even a heartbeat (every 15 s), arrived for this long (default 45 s; 0: never). */
  idleTimeoutMs?: number;
}

/** The live stream: iterate it with `for await`; it reconnects with the last event's id until stopped. */
export interface EventSubscription extends AsyncIterable<GovernanceEvent> {
  /** The id of the last event handed out (or the one it started from). */
  readonly lastEventId: string | undefined;
  /** Closes the connection and ends the iteration. */
  close(): void;
}

export interface StreamContext {
  api: ApiClient;
  baseUrl: string;
  WebSocket: WebSocketConstructor | undefined;
}

const STREAM_PATH = '/api/v1/events/stream';
const WS_PATH = '/api/v1/events/ws';
/** The WebSocket close code of a refused stream token or of revoked access. */
const WS_CLOSE_UNAUTHORIZED = 4401;

interface ConnectionHooks {
  /** The connection is established (the stream answered 200, the WebSocket opened). */
  opened(): void;
  /** The server's reconnection delay (SSE `retry:`). */
  retry(ms: number): void;
}

/** One connection: its events until it ends (return) or fails (throw). */
type Connect = (
  signal: AbortSignal,
  hooks: ConnectionHooks,
) => AsyncGenerator<GovernanceEvent, void, undefined>;

class Fatal extends Error {
  constructor(readonly error: unknown) {
    super('fatal');
  }
}

/** Opens the organization's event stream (`POST /auth/stream-token`, then SSE or a WebSocket). */
export function subscribe(context: StreamContext, options: SubscribeOptions = {}): EventSubscription {
  return new Subscription(context, options);
}

class Subscription implements EventSubscription {
  private last: string | undefined;
  private readonly stop = new AbortController();

  constructor(
    private readonly context: StreamContext,
    private readonly options: SubscribeOptions,
  ) {
    this.last = options.lastEventId;
    const outer = options.signal;
    if (outer?.aborted) this.stop.abort();
    else outer?.addEventListener('abort', () => this.stop.abort(), { once: true });
  }

  get lastEventId(): string | undefined {
    return this.last;
  }

  close(): void {
    this.stop.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<GovernanceEvent> {
    return this.options.transport === 'websocket' ? this.viaWebSocket() : this.viaSse();
  }

  /** Attempts until one connects, with backoff; a fatal error or too many failures end the iteration. */
  private async *connections(connect: Connect): AsyncGenerator<GovernanceEvent, void, undefined> {
    const signal = this.stop.signal;
    const reconnect = this.options.reconnect ?? {};
    let failures = 0;
    let lastError: unknown;
    let serverRetryMs: number | undefined;
    while (!signal.aborted) {
      const attempt = new AbortController();
      const onStop = () => attempt.abort();
      signal.addEventListener('abort', onStop, { once: true });
      let connected = false;
      let retryAfterSeconds: number | undefined;
      const hooks: ConnectionHooks = {
        opened: () => {
          connected = true;
        },
        retry: (ms) => {
          serverRetryMs = ms;
        },
      };
      try {
        for await (const event of connect(attempt.signal, hooks)) {
          if (event.id) this.last = event.id;
          yield event;
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof Fatal) throw error.error;
        lastError = error;
        if (error instanceof GovernanceError) retryAfterSeconds = error.retryAfterSeconds;
      } finally {
        signal.removeEventListener('abort', onStop);
        attempt.abort();
      }
      if (signal.aborted) return;
      // A connection that was established and then dropped starts the backoff afresh.
      failures = connected ? 0 : failures + 1;
      if (reconnect.maxAttempts !== undefined && failures >= reconnect.maxAttempts) {
        throw lastError ?? new Error('The event stream could not connect');
      }
      const base = reconnect.initialDelayMs ?? serverRetryMs ?? 1000;
      const exponential = Math.min(reconnect.maxDelayMs ?? 30_000, base * 2 ** failures);
      const delay = Math.max(exponential * (0.8 + Math.random() * 0.4), (retryAfterSeconds ?? 0) * 1000);
      try {
        await sleep(delay, signal);
      } catch {
        return;
      }
    }
  }

  private async streamToken(signal: AbortSignal): Promise<string> {
    const { data, error, response } = await this.context.api.POST('/api/v1/auth/stream-token', { signal });
    if (!response.ok || !data) {
      const failure = GovernanceError.from(response, error);
      // A session or key the service refuses will not be accepted on the next attempt either.
      if (failure.status < 500 && failure.status !== 429) throw new Fatal(failure);
      throw failure;
    }
    return data.data.token;
  }

  private viaSse(): AsyncGenerator<GovernanceEvent, void, undefined> {
    return this.connections((signal, hooks) => this.sseConnection(signal, hooks));
  }

  private viaWebSocket(): AsyncGenerator<GovernanceEvent, void, undefined> {
    return this.connections((signal, hooks) => this.webSocketConnection(signal, hooks));
  }

  /** One SSE connection: a fresh stream token, `Last-Event-ID`, the frames until the stream ends or goes quiet. */
  private async *sseConnection(
    signal: AbortSignal,
    hooks: ConnectionHooks,
  ): AsyncGenerator<GovernanceEvent, void, undefined> {
    const idleTimeoutMs = this.options.idleTimeoutMs ?? 45_000;
    const token = await this.streamToken(signal);
    const last = this.last;
    const { response, error } = await this.context.api.GET(STREAM_PATH, {
      params: { query: { token } },
      headers: { Accept: 'text/event-stream', ...(last ? { 'Last-Event-ID': last } : {}) },
      parseAs: 'stream',
      signal,
    });
    if (!response.ok) {
      const failure = GovernanceError.from(response, error);
      if ([429, 502, 503, 504].includes(failure.status)) throw failure;
      throw new Fatal(failure);
    }
    if (!response.body) throw new Error('The event stream answered without a body');
    hooks.opened();
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser(last);
    let idle: ReturnType<typeof setTimeout> | undefined;
    const watch = () => {
      if (idleTimeoutMs <= 0) return;
      if (idle !== undefined) clearTimeout(idle);
      idle = setTimeout(() => void reader.cancel(new Error('The event stream went quiet')), idleTimeoutMs);
    };
    try {
      watch();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        watch();
        const output = parser.push(decoder.decode(value, { stream: true }));
        if (output.retryMs !== undefined) hooks.retry(output.retryMs);
        for (const message of output.messages) {
          const event = eventOf(message.id, message.data);
          if (event) yield event;
        }
      }
    } finally {
      if (idle !== undefined) clearTimeout(idle);
      void reader.cancel().catch(() => undefined);
    }
  }

  /** One WebSocket connection: a fresh stream token, `lastEventId`, the messages until it closes. */
  private async *webSocketConnection(
    signal: AbortSignal,
    hooks: ConnectionHooks,
  ): AsyncGenerator<GovernanceEvent, void, undefined> {
    const WebSocketClass =
      this.context.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WebSocketClass) {
      throw new Fatal(
        new Error('No WebSocket here: pass `WebSocket` (the ws package’s) to createGovernanceClient'),
      );
    }
    const token = await this.streamToken(signal);
    const url = new URL(`${this.context.baseUrl.replace(/\/+$/, '')}${WS_PATH}`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('token', token);
    if (this.last) url.searchParams.set('lastEventId', this.last);
    const queue = new AsyncQueue<{ data: unknown } | { code: number; reason: string } | 'open'>();
    const socket = new WebSocketClass(url.toString());
    socket.addEventListener('open', () => queue.push('open'));
    socket.addEventListener('message', (event) => queue.push({ data: event.data }));
    socket.addEventListener('close', (event) => {
      queue.push({ code: event.code, reason: event.reason });
      queue.end();
    });
    socket.addEventListener('error', () => undefined);
    const onAbort = () => {
      socket.close(1000, 'Closed by the client');
      queue.end();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        const item = await queue.next();
        if (item === undefined) break;
        if (item === 'open') {
          hooks.opened();
          continue;
        }
        if ('code' in item) {
          if (item.code === WS_CLOSE_UNAUTHORIZED) {
            throw new Fatal(
              new GovernanceError({
                status: 401,
                code: 'UNAUTHORIZED',
                message: item.reason || 'The event stream refused the credentials',
              }),
            );
          }
          break;
        }
        const text = typeof item.data === 'string' ? item.data : String(item.data);
        let json: { id?: unknown };
        try {
          json = JSON.parse(text) as { id?: unknown };
        } catch {
          continue;
        }
        const event = eventOf(typeof json.id === 'string' ? json.id : undefined, text);
        if (event) yield event;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (socket.readyState < 2) socket.close(1000, 'Closed by the client');
    }
  }
}

/** An event from a frame's JSON; a frame that is not one is skipped. */
function eventOf(id: string | undefined, data: string): GovernanceEvent | null {
  try {
    const json = JSON.parse(data) as Record<string, unknown>;
    const { id: _inner, ...body } = json;
    return toGovernanceEvent(id ?? (typeof _inner === 'string' ? _inner : ''), body);
  } catch {
    return null;
  }
}

/** A queue from callbacks to `await`: `next()` resolves with the next item, or undefined once ended and empty. */
class AsyncQueue<T> {
  private readonly items: T[] = [];
  private waiting: ((item: T | undefined) => void) | null = null;
  private ended = false;

  push(item: T): void {
    if (this.ended) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve(item);
    } else {
      this.items.push(item);
    }
  }

  end(): void {
    this.ended = true;
    if (this.waiting && this.items.length === 0) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve(undefined);
    }
  }

  next(): Promise<T | undefined> {
    if (this.items.length > 0) return Promise.resolve(this.items.shift());
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }
}
