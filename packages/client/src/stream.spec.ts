import { describe, expect, it } from 'vitest';
import { createGovernanceClient } from './client.js';
import type { GovernanceEvent } from './events.js';
import { MAX_TIMER_MS, sleep } from './retry.js';
import {
  BASE,
  chunked,
  failure,
  fakeFetch,
  json,
  never,
  type SeenRequest,
  within,
} from './spec/fake-fetch.js';
import { reconnectDelayMs, WEBSOCKET_IDLE_TIMEOUT_MS, type WebSocketLike } from './stream.js';

const frame = (id: string, type = 'trace.flagged') =>
  `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify({ type, timestamp: '2026-05-04T09:00:00.000Z', data: { n: id } })}\n\n`;

/** A fake service: stream tokens, and each stream connection answered by `streams(index, request)`. */
function eventService(streams: (index: number, request: SeenRequest) => Response | Promise<Response>) {
  let tokens = 0;
  let connections = 0;
  const fake = fakeFetch((request) => {
    if (request.url.pathname === '/api/v1/auth/stream-token') {
      tokens += 1;
      return json(201, {
        success: true,
        data: { token: `st-${tokens}`, expiresAt: '2026-05-04T09:01:00.000Z' },
      });
    }
    return streams(connections++, request);
  });
  const client = createGovernanceClient({ baseUrl: BASE, fetch: fake.fetch, credentials: { jwt: 'jwt' } });
  const streamRequests = () => fake.seen.filter((r) => r.url.pathname === '/api/v1/events/stream');
  return { client, streamRequests, seen: fake.seen };
}

async function take(iterable: AsyncIterable<GovernanceEvent>, count: number): Promise<GovernanceEvent[]> {
  const events: GovernanceEvent[] = [];
  for await (const event of iterable) {
    events.push(event);
    if (events.length === count) break;
  }
  return events;
}

describe('events.subscribe over SSE', () => {
  it('yields typed events with their ids, reconnecting after a drop with a new token and Last-Event-ID', async () => {
    const { client, streamRequests } = eventService((index) =>
      index === 0
        ? chunked([
            ': connected\nretry: 3000\n\n',
            frame('e1'),
            frame('e2').slice(0, 20),
            frame('e2').slice(20),
          ])
        : chunked([': connected\n\n', frame('e3', 'review.completed')]),
    );
    const subscription = client.events.subscribe({ reconnect: { initialDelayMs: 1 } });
    const events = await take(subscription, 3);
    expect(events.map((e) => [e.id, e.type])).toEqual([
      ['e1', 'trace.flagged'],
      ['e2', 'trace.flagged'],
      ['e3', 'review.completed'],
    ]);
    expect(events[0]).toEqual({
      id: 'e1',
      type: 'trace.flagged',
      timestamp: '2026-05-04T09:00:00.000Z',
      data: { n: 'e1' },
    });
    expect(subscription.lastEventId).toBe('e3');
    const [first, second] = streamRequests();
    expect(first!.url.searchParams.get('token')).toBe('st-1');
    expect(first!.headers.get('last-event-id')).toBeNull();
    expect(first!.headers.get('accept')).toBe('text/event-stream');
    expect(second!.url.searchParams.get('token')).toBe('st-2');
    expect(second!.headers.get('last-event-id')).toBe('e2');
  });

  it('starts from the lastEventId given', async () => {
    const { client, streamRequests } = eventService(() => chunked([frame('e8')]));
    await take(client.events.subscribe({ lastEventId: 'e7' }), 1);
    expect(streamRequests()[0]!.headers.get('last-event-id')).toBe('e7');
  });

  it('retries a 503 and a network error with backoff, and gives up after maxAttempts', async () => {
    const { client, streamRequests } = eventService((index) => {
      if (index === 0) return failure(503, 'SERVICE_UNAVAILABLE');
      if (index === 1) throw new TypeError('fetch failed');
      return chunked([frame('e1')]);
    });
    expect((await take(client.events.subscribe({ reconnect: { initialDelayMs: 1 } }), 1))[0]!.id).toBe('e1');
    expect(streamRequests()).toHaveLength(3);

    const down = eventService(() => {
      throw new TypeError('fetch failed');
    });
    await expect(
      take(down.client.events.subscribe({ reconnect: { initialDelayMs: 1, maxAttempts: 3 } }), 1),
    ).rejects.toThrow('fetch failed');
    expect(down.streamRequests()).toHaveLength(3);
  });

  it('throws at once when the credentials are refused (no stream token)', async () => {
    const fake = fakeFetch(() => failure(401, 'SESSION_REVOKED'));
    const client = createGovernanceClient({ baseUrl: BASE, fetch: fake.fetch, credentials: { jwt: 'jwt' } });
    await expect(take(client.events.subscribe(), 1)).rejects.toMatchObject({
      status: 401,
      code: 'SESSION_REVOKED',
    });
    expect(fake.seen).toHaveLength(1);
  });

  it('ends without an error when the signal aborts or close() is called', async () => {
    const controller = new AbortController();
    const { client } = eventService(() => chunked([frame('e1')]));
    const events: GovernanceEvent[] = [];
    const subscription = client.events.subscribe({
      signal: controller.signal,
      reconnect: { initialDelayMs: 5 },
    });
    for await (const event of subscription) {
      events.push(event);
      if (events.length === 2) controller.abort();
    }
    expect(events).toHaveLength(2);

    const second = client.events.subscribe({ reconnect: { initialDelayMs: 5 } });
    const all: GovernanceEvent[] = [];
    for await (const event of second) {
      all.push(event);
      second.close();
    }
    expect(all).toHaveLength(1);
  });

  it('reconnects when the stream goes quiet past idleTimeoutMs', async () => {
    let connections = 0;
    const fake = fakeFetch((request) => {
      if (request.url.pathname === '/api/v1/auth/stream-token') {
        return json(201, { success: true, data: { token: 't', expiresAt: '' } });
      }
      connections += 1;
      if (connections === 1) {
        // Open, one event, then silence (no heartbeat, no end).
        const encoder = new TextEncoder();
        return new Response(
          new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(encoder.encode(frame('e1'))) }),
          { headers: { 'content-type': 'text/event-stream' } },
        );
      }
      return chunked([frame('e2')]);
    });
    const client = createGovernanceClient({ baseUrl: BASE, fetch: fake.fetch, credentials: { jwt: 'jwt' } });
    const events = await take(
      client.events.subscribe({ idleTimeoutMs: 50, reconnect: { initialDelayMs: 1 } }),
      2,
    );
    expect(events.map((e) => e.id)).toEqual(['e1', 'e2']);
  });
});

describe('events.subscribe over SSE: several frames in one chunk (a replay is written at once)', () => {
  const batch = (count: number) => Array.from({ length: count }, (_, i) => frame(`e${i + 1}`)).join('');

  it('hands out nothing after close(), though the rest of the chunk was received', async () => {
    const { client, streamRequests } = eventService(() => chunked([batch(3)]));
    const subscription = client.events.subscribe({ reconnect: { initialDelayMs: 5 } });
    const events: GovernanceEvent[] = [];
    for await (const event of subscription) {
      events.push(event);
      subscription.close();
    }
    expect(events.map((e) => e.id)).toEqual(['e1']);
    expect(subscription.lastEventId).toBe('e1');
    expect(streamRequests()).toHaveLength(1);
  });

  it('hands out nothing after the signal aborts, in a replay batch of 1,000 events', async () => {
    const { client } = eventService(() => chunked([batch(1000)]));
    const controller = new AbortController();
    const events: GovernanceEvent[] = [];
    for await (const event of client.events.subscribe({ signal: controller.signal })) {
      events.push(event);
      if (events.length === 10) controller.abort();
    }
    expect(events).toHaveLength(10);
    expect(events.at(-1)!.id).toBe('e10');
  });

  it('ends at once when closed from outside while a chunk’s events are being handed out', async () => {
    const { client } = eventService(() => chunked([batch(5)]));
    const subscription = client.events.subscribe();
    const iterator = subscription[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ id: 'e1' });
    subscription.close();
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });
});

describe('events.subscribe over SSE: failures, timeouts and backoff', () => {
  it('retries any 5xx and a 408 of the stream, and keeps a refusal (400, 401, 403) final', async () => {
    for (const status of [500, 501, 502, 504, 408]) {
      const { client, streamRequests } = eventService((index) =>
        index === 0 ? failure(status, 'SOMETHING') : chunked([frame('e1')]),
      );
      const events = await within(
        take(client.events.subscribe({ reconnect: { initialDelayMs: 1 } }), 1),
        2000,
      );
      expect(events.map((e) => e.id)).toEqual(['e1']);
      expect(streamRequests()).toHaveLength(2);
    }
    for (const [status, code] of [
      [400, 'VALIDATION_ERROR'],
      [401, 'UNAUTHORIZED'],
      [403, 'FORBIDDEN'],
    ] as const) {
      const { client, streamRequests } = eventService(() => failure(status, code));
      await expect(
        take(client.events.subscribe({ reconnect: { initialDelayMs: 1 } }), 1),
      ).rejects.toMatchObject({
        status,
        code,
      });
      expect(streamRequests()).toHaveLength(1);
    }
  });

  it('waits at most maxDelayMs, whatever Retry-After asks', async () => {
    const times: number[] = [];
    const { client } = eventService((index) => {
      times.push(Date.now());
      return index === 0
        ? json(503, { success: false, error: 'Busy', code: 'SERVICE_UNAVAILABLE' }, { 'retry-after': '3' })
        : chunked([frame('e1')]);
    });
    await within(
      take(client.events.subscribe({ reconnect: { initialDelayMs: 1, maxDelayMs: 20 } }), 1),
      2500,
    );
    expect(times[1]! - times[0]!).toBeLessThan(1000);
  });

  it('computes a delay a timer can take, however large Retry-After or maxDelayMs', () => {
    expect(reconnectDelayMs({ failures: 0, maxDelayMs: 50, retryAfterSeconds: 5 }, () => 0.5)).toBe(50);
    expect(
      reconnectDelayMs({ failures: 40, maxDelayMs: 2 ** 40, retryAfterSeconds: 10 ** 9 }, () => 1),
    ).toBeLessThanOrEqual(MAX_TIMER_MS);
    expect(reconnectDelayMs({ failures: 0, initialDelayMs: 100 }, () => 0.5)).toBe(100);
    expect(reconnectDelayMs({ failures: 2, initialDelayMs: 100 }, () => 0.5)).toBe(400);
    // The server's retry: when no initial delay is given; never more than maxDelayMs, jitter included.
    expect(reconnectDelayMs({ failures: 0, serverRetryMs: 3000 }, () => 0.5)).toBe(3000);
    expect(reconnectDelayMs({ failures: 10, initialDelayMs: 100, maxDelayMs: 1000 }, () => 1)).toBe(1000);
  });

  it('does not fire a delay longer than a timer takes after a millisecond (it would be a hot loop)', async () => {
    const controller = new AbortController();
    const slept = sleep(2 ** 31 + 10, controller.signal).then(() => 'slept');
    const result = await Promise.race([slept, new Promise((resolve) => setTimeout(resolve, 50, 'waiting'))]);
    controller.abort();
    await slept.catch(() => undefined);
    expect(result).toBe('waiting');
  });

  it('gives up a stream-token request that does not answer within connectTimeoutMs, and tries again', async () => {
    let tokens = 0;
    const fake = fakeFetch((request) => {
      if (request.url.pathname === '/api/v1/auth/stream-token') {
        tokens += 1;
        // The first never answers, whether or not its signal aborts.
        if (tokens === 1) return new Promise<Response>(() => undefined);
        return json(201, { success: true, data: { token: 't', expiresAt: '' } });
      }
      return chunked([frame('e1')]);
    });
    const client = createGovernanceClient({ baseUrl: BASE, fetch: fake.fetch, credentials: { jwt: 'jwt' } });
    const events = await within(
      take(client.events.subscribe({ connectTimeoutMs: 50, reconnect: { initialDelayMs: 1 } }), 1),
      2000,
    );
    expect(events.map((e) => e.id)).toEqual(['e1']);
    expect(tokens).toBe(2);
  });

  it('gives up a stream that does not answer within connectTimeoutMs, and tries again', async () => {
    const { client, streamRequests } = eventService((index, request) =>
      index === 0 ? never(request) : chunked([frame('e1')]),
    );
    const events = await within(
      take(client.events.subscribe({ connectTimeoutMs: 50, reconnect: { initialDelayMs: 1 } }), 1),
      2000,
    );
    expect(events.map((e) => e.id)).toEqual(['e1']);
    expect(streamRequests()).toHaveLength(2);
    expect(streamRequests()[0]!.signal.aborted).toBe(true);
  });

  it('runs the idle watchdog from the request on: a stream that never answers is quiet too', async () => {
    const { client, streamRequests } = eventService((index) =>
      // Ignores its signal, and never answers.
      index === 0 ? new Promise<Response>(() => undefined) : chunked([frame('e1')]),
    );
    const events = await within(
      take(
        client.events.subscribe({ connectTimeoutMs: 0, idleTimeoutMs: 50, reconnect: { initialDelayMs: 1 } }),
        1,
      ),
      2000,
    );
    expect(events.map((e) => e.id)).toEqual(['e1']);
    expect(streamRequests()).toHaveLength(2);
  });

  it('refuses options that are not usable numbers', () => {
    const { client } = eventService(() => chunked([]));
    for (const options of [
      { reconnect: { maxAttempts: 0 } },
      { reconnect: { maxAttempts: 1.5 } },
      { reconnect: { initialDelayMs: Number.NaN } },
      { reconnect: { maxDelayMs: Number.POSITIVE_INFINITY } },
      { idleTimeoutMs: -1 },
      { connectTimeoutMs: Number.NaN },
    ]) {
      expect(() => client.events.subscribe(options)).toThrow(TypeError);
    }
  });

  it('treats an empty id as WHATWG says (it resets the last event ID), and does not resume from a stale one', async () => {
    const body = (id: string | null, n: string) =>
      `${id === null ? '' : `id:${id ? ` ${id}` : ''}\n`}data: ${JSON.stringify({ type: 'trace.flagged', timestamp: 't', data: { n } })}\n\n`;
    const { client, streamRequests } = eventService((index) =>
      index === 0
        ? chunked([body('e1', '1'), body(null, '2'), body('', '3'), body(null, '4')])
        : chunked([body(null, '5')]),
    );
    const subscription = client.events.subscribe({ reconnect: { initialDelayMs: 1 } });
    const ids: [string, string | undefined][] = [];
    for await (const event of subscription) {
      ids.push([event.id, subscription.lastEventId]);
      if (ids.length === 5) break;
    }
    // The id persists across events until an empty one resets it; the subscription resumes from what is in force.
    expect(ids).toEqual([
      ['e1', 'e1'],
      ['e1', 'e1'],
      ['', undefined],
      ['', undefined],
      ['', undefined],
    ]);
    expect(streamRequests()[1]!.headers.get('last-event-id')).toBeNull();
  });
});

/** A WebSocket double: each instance plays the script it is given. */
interface ScriptedSocket extends WebSocketLike {
  emit(type: 'open' | 'message' | 'close', event: unknown): void;
}

function scriptedWebSocket(scripts: ((socket: ScriptedSocket) => void)[]) {
  const urls: string[] = [];
  class FakeSocket implements ScriptedSocket {
    readyState = 0;
    private listeners = new Map<string, ((event: never) => void)[]>();
    constructor(url: string) {
      urls.push(url);
      const script = scripts[urls.length - 1];
      setTimeout(() => script?.(this), 1);
    }
    addEventListener(type: string, listener: (event: never) => void): void {
      this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
    }
    emit(type: string, event: unknown): void {
      if (type === 'open') this.readyState = 1;
      if (type === 'close') this.readyState = 3;
      for (const listener of this.listeners.get(type) ?? []) listener(event as never);
    }
    close(code = 1000, reason = ''): void {
      if (this.readyState < 2) this.emit('close', { code, reason });
    }
  }
  return { WebSocket: FakeSocket, urls };
}

describe('events.subscribe over a WebSocket', () => {
  const message = (id: string) =>
    ({
      data: JSON.stringify({ id, type: 'trace.flagged', timestamp: '2026-05-04T09:00:00.000Z', data: {} }),
    }) as const;

  it('yields the messages as events and reconnects after a 1013 with lastEventId', async () => {
    const { WebSocket, urls } = scriptedWebSocket([
      (s) => {
        s.emit('open', {});
        s.emit('message', message('w1'));
        s.emit('close', { code: 1013, reason: 'Too slow: reconnect with lastEventId' });
      },
      (s) => {
        s.emit('open', {});
        s.emit('message', message('w2'));
      },
    ]);
    const client = createGovernanceClient({
      baseUrl: `${BASE}/`,
      fetch: fetchToken,
      credentials: { jwt: 'jwt' },
      WebSocket,
    });
    const events = await take(
      client.events.subscribe({ transport: 'websocket', reconnect: { initialDelayMs: 1 } }),
      2,
    );
    expect(events.map((e) => e.id)).toEqual(['w1', 'w2']);
    expect(events[0]).toMatchObject({ type: 'trace.flagged', data: {} });
    expect(urls[0]).toBe('ws://governance.test/api/v1/events/ws?token=st');
    expect(urls[1]).toBe('ws://governance.test/api/v1/events/ws?token=st&lastEventId=w1');
  });

  it('hands out nothing after close(), though several messages arrived at once', async () => {
    const { WebSocket } = scriptedWebSocket([
      (s) => {
        s.emit('open', {});
        for (const id of ['w1', 'w2', 'w3']) s.emit('message', message(id));
      },
    ]);
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch: fetchToken,
      credentials: { jwt: 'jwt' },
      WebSocket,
    });
    const subscription = client.events.subscribe({ transport: 'websocket' });
    const events: GovernanceEvent[] = [];
    for await (const event of subscription) {
      events.push(event);
      subscription.close();
    }
    expect(events.map((e) => e.id)).toEqual(['w1']);

    const controller = new AbortController();
    const again = scriptedWebSocket([
      (s) => {
        s.emit('open', {});
        for (const id of ['w1', 'w2', 'w3']) s.emit('message', message(id));
      },
    ]);
    const aborted: GovernanceEvent[] = [];
    for await (const event of createGovernanceClient({
      baseUrl: BASE,
      fetch: fetchToken,
      credentials: { jwt: 'jwt' },
      WebSocket: again.WebSocket,
    }).events.subscribe({ transport: 'websocket', signal: controller.signal })) {
      aborted.push(event);
      controller.abort();
    }
    expect(aborted.map((e) => e.id)).toEqual(['w1']);
  });

  it('counts a 1013 right after opening as a failure: the backoff grows and maxAttempts ends it', async () => {
    const busy = (s: ScriptedSocket) => {
      s.emit('open', {});
      s.emit('close', { code: 1013, reason: 'Try again later' });
    };
    const { WebSocket, urls } = scriptedWebSocket([busy, busy, busy, busy, busy, busy]);
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch: fetchToken,
      credentials: { jwt: 'jwt' },
      WebSocket,
    });
    await expect(
      within(
        take(
          client.events.subscribe({
            transport: 'websocket',
            reconnect: { initialDelayMs: 1, maxAttempts: 3 },
          }),
          1,
        ),
        2000,
      ),
    ).rejects.toThrow(/1013 Try again later/);
    expect(urls).toHaveLength(3);
  });

  it('reconnects a socket that opened and went quiet past idleTimeoutMs, and one that never opened', async () => {
    const { WebSocket, urls } = scriptedWebSocket([
      (s) => s.emit('open', {}), // then silence
      () => undefined, // never opens
      (s) => {
        s.emit('open', {});
        s.emit('message', message('w1'));
      },
    ]);
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch: fetchToken,
      credentials: { jwt: 'jwt' },
      WebSocket,
    });
    const events = await within(
      take(
        client.events.subscribe({
          transport: 'websocket',
          idleTimeoutMs: 50,
          connectTimeoutMs: 50,
          reconnect: { initialDelayMs: 1 },
        }),
        1,
      ),
      2000,
    );
    expect(events.map((e) => e.id)).toEqual(['w1']);
    expect(urls).toHaveLength(3);
    // The default is generous: the server's pings are invisible to the WebSocket API.
    expect(WEBSOCKET_IDLE_TIMEOUT_MS).toBeGreaterThanOrEqual(5 * 60_000);
  });

  it('throws 401 UNAUTHORIZED on close code 4401', async () => {
    const { WebSocket } = scriptedWebSocket([(s) => s.emit('close', { code: 4401, reason: 'Unauthorized' })]);
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch: fetchToken,
      credentials: { jwt: 'jwt' },
      WebSocket,
    });
    await expect(take(client.events.subscribe({ transport: 'websocket' }), 1)).rejects.toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
      message: 'Unauthorized',
    });
  });

  it('says what to do where there is no WebSocket', async () => {
    const client = createGovernanceClient({ baseUrl: BASE, fetch: fetchToken, credentials: { jwt: 'jwt' } });
    const global = globalThis as { WebSocket?: unknown };
    const saved = global.WebSocket;
    delete global.WebSocket;
    try {
      await expect(take(client.events.subscribe({ transport: 'websocket' }), 1)).rejects.toThrow(
        /ws package/,
      );
    } finally {
      if (saved) global.WebSocket = saved;
    }
  });
});

async function fetchToken(_request: Request): Promise<Response> {
  return json(201, { success: true, data: { token: 'st', expiresAt: '2026-05-04T09:01:00.000Z' } });
}
