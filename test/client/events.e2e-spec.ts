import {
  type GovernanceClient,
  GovernanceError,
  type GovernanceEvent,
  type SubscribeOptions,
  type WebSocketConstructor,
} from '@governance/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket as WsWebSocket } from 'ws';
import { EventStreamHub } from '#governance';
import { ListeningService, signUp, type SignedUp, until } from './harness.js';

/** A WebSocket class that records the URLs it opens (the reconnection's `lastEventId`). */
function recordingWebSocket(Base: WebSocketConstructor, urls: string[]): WebSocketConstructor {
  return class extends (Base as new (url: string) => InstanceType<WebSocketConstructor>) {
    constructor(url: string) {
      urls.push(url);
      super(url);
    }
  };
}

/** The trace an event is about, for the events that are about one. */
const traceIdOf = (event: GovernanceEvent) => ('traceId' in event.data ? event.data.traceId : undefined);

const globalWebSocket = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;

/** The transports to test: SSE, the ws package's WebSocket, and the runtime's own where it has one (Node 22+). */
const transports: [string, 'sse' | 'websocket', WebSocketConstructor | undefined][] = [
  ['SSE', 'sse', undefined],
  ['a WebSocket (the ws package)', 'websocket', WsWebSocket],
  ...(globalWebSocket ? [['a WebSocket (the runtime’s own)', 'websocket', globalWebSocket] as const] : []),
] as [string, 'sse' | 'websocket', WebSocketConstructor | undefined][];

describe('client: the live event stream', () => {
  let service: ListeningService;
  let owner: SignedUp;
  let agent: GovernanceClient;

  beforeAll(async () => {
    service = await ListeningService.start();
    owner = await signUp(service, 'Streamed');
    const created = await owner.client.post('/api/v1/agents', { body: { name: 'Streamed agent' } });
    agent = service.client({ credentials: { apiKey: created.apiKey } });
    await owner.client.post('/api/v1/policies', {
      body: {
        name: 'Everything',
        outcome: 'flag',
        conditions: [{ field: 'confidence', operator: 'lte', value: 1 }],
      },
    });
  });
  afterAll(async () => service?.close());

  const hub = () => service.ctx.service(EventStreamHub);
  const flag = async (prompt: string) =>
    (await agent.sendTrace({ inputContext: { prompt }, outputDecision: { action: 'reply', text: prompt } }))
      .trace.id;

  /** Iterates a subscription in the background, keeping what it yields. */
  function collect(iterable: AsyncIterable<GovernanceEvent>) {
    const events: GovernanceEvent[] = [];
    const done = (async () => {
      for await (const event of iterable) events.push(event);
    })();
    return { events, done };
  }

  describe.each(transports)('over %s', (_name, transport, WebSocketClass) => {
    it('yields typed events and, after the connection drops, replays what it missed from its last id', async () => {
      const streamRequests: Request[] = [];
      const urls: string[] = [];
      const client = service.client({
        credentials: { jwt: owner.token },
        WebSocket: WebSocketClass ? recordingWebSocket(WebSocketClass, urls) : undefined,
        fetch: (request) => {
          if (new URL(request.url).pathname === '/api/v1/events/stream') streamRequests.push(request.clone());
          return fetch(request);
        },
      });
      const controller = new AbortController();
      const options: SubscribeOptions = {
        transport,
        signal: controller.signal,
        reconnect: { initialDelayMs: 400 },
      };
      const opened = hub().opened;
      const { events, done } = collect(client.events.subscribe(options));
      try {
        await until(() => hub().opened >= opened + 1, 'the subscription');
        const first = await flag('Before the drop');
        await until(() => events.length === 1, 'the first event');
        const event = events[0]!;
        if (event.type !== 'trace.flagged') throw new Error(`unexpected ${event.type}`);
        expect(event.data).toMatchObject({ traceId: first, status: 'flagged' });
        expect(event.id).toMatch(/^[0-9a-f]{24}$/);

        // The network drops; two traces are flagged before the client is back.
        expect(service.dropConnections()).toBeGreaterThan(0);
        const missed = [await flag('Missed 1'), await flag('Missed 2')];
        await until(() => hub().opened >= opened + 2, 'the reconnection');
        const live = await flag('After the reconnection');
        await until(() => events.length >= 4, 'the replay and the live event');
        await new Promise((resolve) => setTimeout(resolve, 100));

        expect(events.map(traceIdOf)).toEqual([first, ...missed, live]);
        expect(new Set(events.map((e) => e.id)).size).toBe(4);
        if (transport === 'sse') {
          expect(streamRequests.map((r) => r.headers.get('last-event-id'))).toEqual([null, event.id]);
        } else {
          expect(urls.map((url) => new URL(url).searchParams.get('lastEventId'))).toEqual([null, event.id]);
        }
      } finally {
        controller.abort();
        await done;
      }
      await until(() => hub().connections === 0, 'the stream to close');
    });

    it('starts after a given lastEventId, and ends when the signal aborts', async () => {
      const client = service.client({ credentials: { jwt: owner.token }, WebSocket: WebSocketClass });
      const before = await flag('Earlier');
      const after = await flag('Later');
      const earlier = await owner.client.page('/api/v1/audit', {
        params: { query: { eventType: 'trace.flagged', limit: 100 } },
      });
      const beforeEntry = earlier.items.find((entry) => entry.targetId === before);
      expect(beforeEntry).toBeDefined();

      const controller = new AbortController();
      const received: GovernanceEvent[] = [];
      for await (const event of client.events.subscribe({
        transport,
        lastEventId: beforeEntry!.id,
        signal: controller.signal,
      })) {
        received.push(event);
        controller.abort();
      }
      expect(received.map(traceIdOf)).toEqual([after]);
    });

    it('hands out nothing after an abort in the middle of a replay (written in one go)', async () => {
      const client = service.client({ credentials: { jwt: owner.token }, WebSocket: WebSocketClass });
      const start = await flag('Replay start');
      const replayed = [await flag('Replay 1'), await flag('Replay 2'), await flag('Replay 3')];
      const entries = await owner.client.page('/api/v1/audit', {
        params: { query: { eventType: 'trace.flagged', limit: 100 } },
      });
      const startEntry = entries.items.find((entry) => entry.targetId === start);
      expect(startEntry).toBeDefined();

      const subscription = client.events.subscribe({ transport, lastEventId: startEntry!.id });
      const received: GovernanceEvent[] = [];
      for await (const event of subscription) {
        received.push(event);
        subscription.close();
      }
      expect(received.map(traceIdOf)).toEqual([replayed[0]]);
      expect(subscription.lastEventId).toBe(received[0]!.id);
    });
  });

  it('refuses the stream to credentials that cannot mint a stream token, with a GovernanceError', async () => {
    const key = await owner.client.post('/api/v1/auth/keys', { body: { name: 'no streams' } });
    const client = service.client({ credentials: { apiKey: key.key } });
    const error = await (async () => {
      for await (const _event of client.events.subscribe()) return null;
      return null;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    expect([401, 403]).toContain((error as GovernanceError).status);
  });
});
