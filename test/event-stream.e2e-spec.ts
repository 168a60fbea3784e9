import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { EventStreamHub } from '#governance';
import { replicaContext, type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { openEventStream, STREAM, until } from './support/event-stream.js';
import type { TestAgent } from './support/builders.js';
import { ingestFlagged, QUEUE, refundFlagPolicy } from './support/review-suite.js';

/** A real EventSource on the listening application, collecting what it receives. */
const openStream = (base: string, query: string, headers: Record<string, string> = {}) =>
  openEventStream(base, query, { headers });

describe('event stream (SSE and WebSocket)', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let agent: TestAgent;
  let otherAgent: TestAgent;
  let viewer: { token: string };
  let base: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Streamers' });
    other = await ctx.register({ organizationName: 'Other streamers' });
    agent = await ctx.newAgent(owner.organization.id, 'Streamed');
    otherAgent = await ctx.newAgent(other.organization.id, 'Not ours');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    await refundFlagPolicy(ctx, owner.organization.id, []);
    await refundFlagPolicy(ctx, other.organization.id, []);
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => ctx?.close());

  const streamToken = async (token = owner.token) => {
    const res = await ctx.post('/api/v1/auth/stream-token', { token });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.token as string;
  };

  it('an SSE client receives an ingested trace’s event and a review decision, and nothing of another organization', async () => {
    const stream = openStream(base, `token=${await streamToken(viewer.token)}`);
    try {
      await stream.opened;
      await ingestFlagged(ctx, otherAgent);
      const { traceId, reviewItemId } = await ingestFlagged(ctx, agent);
      await until(() => stream.received.some((r) => r.type === 'trace.flagged'), 'trace.flagged');
      const flagged = stream.received.find((r) => r.type === 'trace.flagged')!;
      expect(flagged.id).toMatch(/^[0-9a-f]{24}$/);
      expect(flagged.body).toEqual({
        type: 'trace.flagged',
        timestamp: expect.stringMatching(/^\d{4}-/),
        data: expect.objectContaining({ traceId, agentId: agent.id, status: 'flagged', reviewItemId }),
      });
      const decided = await ctx.post(`${QUEUE}/${reviewItemId}/decision`, {
        token: owner.token,
        body: { decision: 'approve' },
      });
      expect(decided.statusCode).toBe(200);
      await until(() => stream.received.some((r) => r.type === 'review.completed'), 'review.completed');
      await new Promise((r) => setTimeout(r, 200));
      expect(stream.received.map((r) => r.type)).toEqual(['trace.flagged', 'review.completed']);
      expect(stream.received.every((r) => r.body.data.agentId === agent.id)).toBe(true);
    } finally {
      stream.source.close();
    }
  });

  it('replays the events after Last-Event-ID (header) or lastEventId (query) on reconnect, then goes live', async () => {
    const first = openStream(base, `token=${await streamToken()}`);
    let lastId: string;
    try {
      await first.opened;
      await ingestFlagged(ctx, agent);
      await until(() => first.received.length === 1, 'the first event');
      lastId = first.received[0]!.id;
    } finally {
      first.source.close();
    }
    // Missed while disconnected.
    const missed = [await ingestFlagged(ctx, agent), await ingestFlagged(ctx, agent)];
    await new Promise((r) => setTimeout(r, 100));
    for (const how of ['header', 'query'] as const) {
      const token = await streamToken();
      const again =
        how === 'header'
          ? openStream(base, `token=${token}`, { 'Last-Event-ID': lastId })
          : openStream(base, `token=${token}&lastEventId=${lastId}`);
      try {
        await again.opened;
        await until(() => again.received.length >= 2, 'the replay');
        expect(again.received.map((r) => r.body.data.traceId)).toEqual(missed.map((m) => m.traceId));
        const live = await ingestFlagged(ctx, agent);
        await until(() => again.received.length >= 3, 'a live event');
        expect(again.received[2]!.body.data.traceId).toBe(live.traceId);
        // Next, reconnect after the first replayed event: the replay is then the second and the live one.
        lastId = again.received[0]!.id;
        missed.splice(0, 2, missed[1]!, live);
      } finally {
        again.source.close();
      }
    }
  });

  it('refuses a missing, reused or JWT token with 401', async () => {
    expectErrorEnvelope(await ctx.get(STREAM), 401, 'UNAUTHORIZED');
    expectErrorEnvelope(await ctx.get(STREAM, { query: { token: owner.token } }), 401, 'UNAUTHORIZED');
    const token = await streamToken();
    const stream = openStream(base, `token=${token}`);
    await stream.opened;
    stream.source.close();
    expectErrorEnvelope(await ctx.get(STREAM, { query: { token } }), 401, 'UNAUTHORIZED');
    expectErrorEnvelope(
      await ctx.get(STREAM, { query: { token: 'x'.repeat(600) } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('an event committed on a second application instance arrives through LISTEN/NOTIFY', async () => {
    const replica = await replicaContext(ctx);
    const stream = openStream(base, `token=${await streamToken()}`);
    try {
      await stream.opened;
      const { traceId } = await ingestFlagged(replica, agent);
      await until(() => stream.received.some((r) => r.body.data.traceId === traceId), 'the replica’s event');
      expect(stream.received.filter((r) => r.body.data.traceId === traceId)).toHaveLength(1);
    } finally {
      stream.source.close();
      await replica.close();
    }
  });

  describe('WebSocket', () => {
    const wsUrl = (query: string) => `${base.replace('http', 'ws')}/api/v1/events/ws?${query}`;
    const connect = (query: string) => {
      const socket = new WebSocket(wsUrl(query));
      const messages: { id: string; type: string; timestamp: string; data: Record<string, unknown> }[] = [];
      socket.on('message', (raw) => messages.push(JSON.parse(raw.toString())));
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      const before = ctx.service(EventStreamHub).opened;
      // Open once the server has authenticated it and subscribed it (the upgrade completes before that).
      const opened = new Promise<void>((resolve, reject) => {
        socket.on('open', () =>
          until(() => ctx.service(EventStreamHub).opened > before, 'the subscription').then(resolve, reject),
        );
        socket.on('error', reject);
      });
      return { socket, messages, closed, opened };
    };

    it('delivers events as JSON messages and replays after lastEventId', async () => {
      const ws = connect(`token=${await streamToken()}`);
      await ws.opened;
      const { traceId } = await ingestFlagged(ctx, agent);
      await until(() => ws.messages.length >= 1, 'a WebSocket message');
      expect(ws.messages[0]).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        type: 'trace.flagged',
        timestamp: expect.any(String),
        data: expect.objectContaining({ traceId, status: 'flagged' }),
      });
      const lastEventId = ws.messages[0]!.id;
      ws.socket.close();
      await ws.closed;
      const missed = await ingestFlagged(ctx, agent);
      const again = connect(`token=${await streamToken()}&lastEventId=${lastEventId}`);
      await again.opened;
      await until(() => again.messages.length >= 1, 'the replay');
      expect(again.messages.map((m) => m.data.traceId)).toEqual([missed.traceId]);
      again.socket.close();
    });

    it('closes with 4401 for a reused token or a JWT, and answers a plain GET with 426', async () => {
      const token = await streamToken();
      const first = connect(`token=${token}`);
      await first.opened;
      first.socket.close();
      const reused = connect(`token=${token}`);
      expect((await reused.closed).code).toBe(4401);
      const jwt = connect(`token=${owner.token}`);
      expect((await jwt.closed).code).toBe(4401);
      const none = connect('');
      expect((await none.closed).code).toBe(4401);
      const plain = await ctx.get('/api/v1/events/ws');
      expectErrorEnvelope(plain, 426, 'UPGRADE_REQUIRED');
    });
  });

  it('keeps streams alive: an SSE heartbeat comment and a WebSocket ping frame', async () => {
    const before = ctx.service(EventStreamHub).opened;
    const res = await fetch(`${base}${STREAM}?token=${await streamToken()}`);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v1/events/ws?token=${await streamToken()}`);
    const pinged = new Promise<void>((resolve) => ws.on('ping', () => resolve()));
    try {
      const hub = ctx.service(EventStreamHub);
      await until(() => hub.opened >= before + 2, 'both streams');
      hub.beat();
      while (!text.includes(': heartbeat')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
      expect(text).toContain(': connected');
      expect(text).toContain(': heartbeat\n\n');
      await pinged;
    } finally {
      await reader.cancel();
      ws.close();
    }
  });

  it('closes open streams when the application shuts down, with a hint to reconnect soon with the last id', async () => {
    const second = await replicaContext(ctx);
    await second.app.listen(0, '127.0.0.1');
    const port = (second.app.getHttpServer().address() as AddressInfo).port;
    const tokenRes = await second.post('/api/v1/auth/stream-token', { token: owner.token });
    const res = await fetch(`http://127.0.0.1:${port}${STREAM}?token=${tokenRes.json().data.token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(second.service(EventStreamHub).connections).toBe(1);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const ended = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return true;
        text += decoder.decode(value, { stream: true });
      }
    })();
    await second.close();
    expect(await ended).toBe(true);
    expect(text).toMatch(/\nretry: 500\n: server restarting; reconnect with Last-Event-ID\n\n$/);
  });
});
