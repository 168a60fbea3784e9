import { describe, expect, it } from 'vitest';
import { createGovernanceClient } from './client.js';
import type { GovernanceEvent } from './events.js';
import { BASE, chunked, failure, fakeFetch, json, type SeenRequest } from './spec/fake-fetch.js';
import type { WebSocketLike } from './stream.js';

const frame = (id: string, type = 'trace.flagged') =>
  `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify({ type, timestamp: '2026-05-04T09:00:00.000Z', data: { n: id } })}\n\n`;

/** A fake service: stream tokens, and each stream connection answered by `streams(index, request)`. */
function eventService(streams: (index: number, request: SeenRequest) => Response) {
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
