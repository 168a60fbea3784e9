import { GovernanceError } from './errors.js';
import { type GovernanceEvent, toGovernanceEvent } from './events.js';
import { RedirectRefusedError } from './credentials.js';
import { abortReason, MAX_TIMER_MS, requireAttempts, requireDelay, sleep } from './retry.js';
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
   * doubled for each failed attempt in a row, with ±20 % jitter; at least what a `Retry-After` asks, but never more
   * than `maxDelayMs`. Finite, at least 0.
   */
  initialDelayMs?: number;
  /** The longest delay between two attempts, `Retry-After` included (default 30 s). Finite, at least 0. */
  maxDelayMs?: number;
  /**
   * Failed attempts in a row after which the iteration throws the last error (default: no limit). An attempt fails
   * unless its connection is established: it delivered an event, or stayed open `ESTABLISHED_AFTER_MS` (5 s). So a
   * connection closed right after it opened (a WebSocket's 1013 when the server is at capacity) counts as a failure,
   * and the backoff grows.
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
  /**
   * Reconnect when nothing arrived for this long (0: never). SSE: default 45 s; the server sends a heartbeat comment
   * every 15 s, and the watchdog runs from the request on, so a connection that never answers is dropped too.
   * WebSocket: default 5 minutes (`WEBSOCKET_IDLE_TIMEOUT_MS`); the server's keep-alives are ping frames, which the
   * WebSocket API does not show, and it sends no message while the organization has no event, so only a long
   * silence is taken for a dead connection (a quiet organization's socket is renewed that often, resuming from the
   * last id: nothing is lost).
   */
  idleTimeoutMs?: number;
  /**
   * How long minting the stream token, the SSE response's headers and the WebSocket's opening may each take before
   * the attempt is given up and retried (default 30 s; 0: no limit).
   */
  connectTimeoutMs?: number;
  /**
   * Called each time a connection is established: the SSE stream answered 200, the WebSocket opened. Over SSE the
   * service answers only once it listens for the organization's events, so an event committed after `onOpen` is not
   * missed: a script that reads a backlog can open the stream, wait for `onOpen`, and then read the backlog.
   */
  onOpen?: () => void;
}

/** The live stream: iterate it with `for await`; it reconnects with the last event's id until stopped. */
export interface EventSubscription extends AsyncIterable<GovernanceEvent> {
  /**
   * The id of the last event handed out (or the one it started from), sent on reconnection. An event with an empty id
   * (an SSE `id:` line without a value resets the last event ID, per WHATWG) leaves it undefined: the reconnection
   * then replays nothing.
   */
  readonly lastEventId: string | undefined;
  /** Closes the connection and ends the iteration: no event is handed out after it, even one received already. */
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
/** SSE: the server's heartbeat comes every 15 s; three missed mean the connection is gone. */
export const SSE_IDLE_TIMEOUT_MS = 45_000;
/** WebSocket: the server sends no message while there is no event (its pings are invisible to the WebSocket API). */
export const WEBSOCKET_IDLE_TIMEOUT_MS = 5 * 60_000;
export const CONNECT_TIMEOUT_MS = 30_000;
/** A connection that stayed open this long (or delivered an event) was established: the backoff starts afresh. */
export const ESTABLISHED_AFTER_MS = 5_000;
const DEFAULT_MAX_DELAY_MS = 30_000;

interface ConnectionHooks {
  /** The connection is open (the stream answered 200, the WebSocket opened). */
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

/** Statuses worth another attempt: the service's or a proxy's trouble (any 5xx), a timeout, a rate limit. */
function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/**
 * The delay before the next attempt: exponential from the initial delay (or the server's `retry:`, or 1 s) with
 * ±20 % jitter, at least `Retry-After`, and never more than `maxDelayMs` nor than a timer can take.
 */
export function reconnectDelayMs(
  input: {
    failures: number;
    initialDelayMs?: number;
    maxDelayMs?: number;
    serverRetryMs?: number;
    retryAfterSeconds?: number;
  },
  random: () => number = Math.random,
): number {
  const longest = Math.min(input.maxDelayMs ?? DEFAULT_MAX_DELAY_MS, MAX_TIMER_MS);
  const base = input.initialDelayMs ?? input.serverRetryMs ?? 1000;
  const exponential = Math.min(longest, base * 2 ** input.failures);
  const jittered = exponential * (0.8 + random() * 0.4);
  const asked = (input.retryAfterSeconds ?? 0) * 1000;
  return Math.round(Math.min(longest, Math.max(jittered, asked)));
}

/** Opens the organization's event stream (`POST /auth/stream-token`, then SSE or a WebSocket). */
export function subscribe(context: StreamContext, options: SubscribeOptions = {}): EventSubscription {
  return new Subscription(context, options);
}

class Subscription implements EventSubscription {
  private last: string | undefined;
  private readonly stop = new AbortController();
  private readonly connectTimeoutMs: number;

  constructor(
    private readonly context: StreamContext,
    private readonly options: SubscribeOptions,
  ) {
    const reconnect = options.reconnect ?? {};
    if (reconnect.maxAttempts !== undefined) requireAttempts(reconnect.maxAttempts, 'reconnect.maxAttempts');
    if (reconnect.initialDelayMs !== undefined)
      requireDelay(reconnect.initialDelayMs, 'reconnect.initialDelayMs');
    if (reconnect.maxDelayMs !== undefined) requireDelay(reconnect.maxDelayMs, 'reconnect.maxDelayMs');
    if (options.idleTimeoutMs !== undefined) requireDelay(options.idleTimeoutMs, 'idleTimeoutMs');
    if (options.connectTimeoutMs !== undefined) requireDelay(options.connectTimeoutMs, 'connectTimeoutMs');
    this.connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
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
      let openedAt: number | undefined;
      let established = false;
      let retryAfterSeconds: number | undefined;
      const hooks: ConnectionHooks = {
        opened: () => {
          openedAt = Date.now();
          try {
            this.options.onOpen?.();
          } catch (error) {
            throw new Fatal(error);
          }
        },
        retry: (ms) => {
          serverRetryMs = ms;
        },
      };
      try {
        for await (const event of connect(attempt.signal, hooks)) {
          // Closed while this connection had events in hand: none is handed out after close().
          if (signal.aborted) return;
          established = true;
          // The position to resume from; an empty id (an SSE `id:` without a value) resets it, as WHATWG says.
          this.last = event.id === '' ? undefined : event.id;
          yield event;
          if (signal.aborted) return;
        }
        lastError = new Error('The event stream ended');
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof Fatal) throw error.error;
        if (error instanceof RedirectRefusedError) throw error;
        lastError = error;
        if (error instanceof GovernanceError) retryAfterSeconds = error.retryAfterSeconds;
      } finally {
        signal.removeEventListener('abort', onStop);
        attempt.abort();
      }
      if (signal.aborted) return;
      // Only a connection that was established (an event, or open long enough) starts the backoff afresh: one closed
      // right after it opened (a WebSocket's 1013 at capacity) is a failure like one that never opened.
      if (openedAt !== undefined && Date.now() - openedAt >= ESTABLISHED_AFTER_MS) established = true;
      failures = established ? 0 : failures + 1;
      if (reconnect.maxAttempts !== undefined && failures >= reconnect.maxAttempts) {
        throw lastError ?? new Error('The event stream could not connect');
      }
      const delay = reconnectDelayMs({
        failures,
        initialDelayMs: reconnect.initialDelayMs,
        maxDelayMs: reconnect.maxDelayMs,
        serverRetryMs,
        retryAfterSeconds,
      });
      try {
        await sleep(delay, signal);
      } catch {
        return;
      }
    }
  }

  private async streamToken(signal: AbortSignal): Promise<string> {
    const limit = deadline(signal, this.connectTimeoutMs, 'Minting a stream token');
    try {
      const { data, error, response } = await abortable(
        this.context.api.POST('/api/v1/auth/stream-token', { signal: limit.signal }),
        limit.signal,
      );
      if (!response.ok || !data) {
        const failure = GovernanceError.from(response, error);
        // A session or key the service refuses will not be accepted on the next attempt either.
        if (!isRetryableStatus(failure.status)) throw new Fatal(failure);
        throw failure;
      }
      return data.data.token;
    } finally {
      limit.clear();
    }
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
    const idleTimeoutMs = this.options.idleTimeoutMs ?? SSE_IDLE_TIMEOUT_MS;
    const token = await this.streamToken(signal);
    const last = this.last;
    // The connection's own controller: the attempt's end, the connect timeout and the watchdog abort it, and an abort
    // ends a read in progress whatever the fetch (one that ignores signals included).
    const connection = new AbortController();
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    const end = (reason: unknown) => {
      if (!connection.signal.aborted) connection.abort(reason);
      void reader?.cancel(reason).catch(() => undefined);
    };
    const onAttemptEnd = () => end(abortReason(signal));
    if (signal.aborted) onAttemptEnd();
    else signal.addEventListener('abort', onAttemptEnd, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const watch = () => {
      if (idleTimeoutMs <= 0) return;
      if (idle !== undefined) clearTimeout(idle);
      idle = setTimeout(
        () => end(new Error(`The event stream went quiet (nothing for ${idleTimeoutMs} ms)`)),
        Math.min(idleTimeoutMs, MAX_TIMER_MS),
      );
    };
    const limit = deadline(connection.signal, this.connectTimeoutMs, 'The event stream’s answer');
    try {
      // From the request on: a server that never answers is as quiet as one that stopped talking.
      watch();
      const { response, error } = await abortable(
        this.context.api.GET(STREAM_PATH, {
          params: { query: { token } },
          headers: { Accept: 'text/event-stream', ...(last ? { 'Last-Event-ID': last } : {}) },
          parseAs: 'stream',
          signal: limit.signal,
        }),
        limit.signal,
      );
      limit.clear();
      if (!response.ok) {
        const failure = GovernanceError.from(response, error);
        if (isRetryableStatus(failure.status)) throw failure;
        throw new Fatal(failure);
      }
      if (!response.body) throw new Error('The event stream answered without a body');
      reader = response.body.getReader();
      if (connection.signal.aborted) throw connection.signal.reason;
      hooks.opened();
      watch();
      const decoder = new TextDecoder();
      const parser = new SseParser(last);
      for (;;) {
        const { done, value } = await reader.read();
        if (done || connection.signal.aborted) break;
        watch();
        const output = parser.push(decoder.decode(value, { stream: true }));
        if (output.retryMs !== undefined) hooks.retry(output.retryMs);
        // A chunk may hold many frames (a replay is written at once): check before each one is handed out.
        for (const message of output.messages) {
          if (signal.aborted || connection.signal.aborted) return;
          const event = eventOf(message.id, message.data);
          if (event) yield event;
        }
      }
      // Gone quiet (or timed out): a failure of this connection, to be retried.
      if (connection.signal.aborted && !signal.aborted) throw connection.signal.reason;
    } finally {
      limit.clear();
      if (idle !== undefined) clearTimeout(idle);
      signal.removeEventListener('abort', onAttemptEnd);
      void reader?.cancel().catch(() => undefined);
    }
  }

  /** One WebSocket connection: a fresh stream token, `lastEventId`, the messages until it closes or goes quiet. */
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
    const idleTimeoutMs = this.options.idleTimeoutMs ?? WEBSOCKET_IDLE_TIMEOUT_MS;
    const connectTimeoutMs = this.connectTimeoutMs;
    const token = await this.streamToken(signal);
    if (signal.aborted) return;
    const url = new URL(`${this.context.baseUrl.replace(/\/+$/, '')}${WS_PATH}`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('token', token);
    if (this.last) url.searchParams.set('lastEventId', this.last);
    const queue = new AsyncQueue<{ data: unknown } | { code: number; reason: string } | 'open'>();
    const socket = new WebSocketClass(url.toString());
    /** Why this side gave the connection up (a timeout, silence), thrown once the queue is drained. */
    let failure: unknown;
    const giveUp = (error: unknown) => {
      failure ??= error;
      queue.clear();
      queue.end();
      if (socket.readyState < 2) socket.close(1000, 'Closed by the client');
    };
    socket.addEventListener('open', () => queue.push('open'));
    socket.addEventListener('message', (event) => queue.push({ data: event.data }));
    socket.addEventListener('close', (event) => {
      queue.push({ code: event.code, reason: event.reason });
      queue.end();
    });
    socket.addEventListener('error', () => undefined);
    const onAbort = () => {
      // What was received and not yet handed out is dropped: nothing is handed out after close().
      queue.clear();
      queue.end();
      if (socket.readyState < 2) socket.close(1000, 'Closed by the client');
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const opening =
      connectTimeoutMs > 0
        ? setTimeout(
            () => giveUp(new Error(`The WebSocket did not open within ${connectTimeoutMs} ms`)),
            Math.min(connectTimeoutMs, MAX_TIMER_MS),
          )
        : undefined;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const watch = () => {
      if (idleTimeoutMs <= 0) return;
      if (idle !== undefined) clearTimeout(idle);
      idle = setTimeout(
        () => giveUp(new Error(`The event stream went quiet (no message for ${idleTimeoutMs} ms)`)),
        Math.min(idleTimeoutMs, MAX_TIMER_MS),
      );
    };
    try {
      for (;;) {
        const item = await queue.next();
        if (item === undefined || signal.aborted) break;
        if (item === 'open') {
          clearTimeout(opening);
          hooks.opened();
          watch();
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
          throw new Error(`The event stream closed (${item.code}${item.reason ? ` ${item.reason}` : ''})`);
        }
        watch();
        const text = typeof item.data === 'string' ? item.data : String(item.data);
        let json: { id?: unknown };
        try {
          json = JSON.parse(text) as { id?: unknown };
        } catch {
          continue;
        }
        const event = eventOf(typeof json.id === 'string' ? json.id : undefined, text);
        if (!event) continue;
        if (signal.aborted) return;
        yield event;
      }
      if (failure !== undefined && !signal.aborted) throw failure;
    } finally {
      clearTimeout(opening);
      if (idle !== undefined) clearTimeout(idle);
      signal.removeEventListener('abort', onAbort);
      queue.clear();
      queue.end();
      if (socket.readyState < 2) socket.close(1000, 'Closed by the client');
    }
  }
}

/**
 * A signal that aborts with `parent`, or with a timeout error after `ms` (0: never); `clear()` stops the timer (the
 * step it bounds is done).
 */
function deadline(parent: AbortSignal, ms: number, what: string): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(abortReason(parent));
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  const timer =
    ms > 0
      ? setTimeout(
          () => controller.abort(new Error(`${what} took more than ${ms} ms`)),
          Math.min(ms, MAX_TIMER_MS),
        )
      : undefined;
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      parent.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * The promise, or a rejection with the signal's reason once it aborts (a fetch that ignores its signal cannot hang
 * the stream). A stream answer that arrives after that is cancelled.
 */
function abortable<T extends { response: Response }>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    void promise.then((late) => late.response.body?.cancel().catch(() => undefined)).catch(() => undefined);
    return Promise.reject(abortReason(signal));
  }
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      settled = true;
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) void value.response.body?.cancel().catch(() => undefined);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) reject(error);
      },
    );
  });
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

  /** Drops what is queued and not yet taken. */
  clear(): void {
    this.items.length = 0;
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
