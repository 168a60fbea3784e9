import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type Cluster, startCluster } from '../../tools/cluster/cluster.mjs';
import { openEventStream, type ReceivedEvent, until as waitUntil } from '../support/event-stream.js';
import { call, createAgent, databaseOf, type Owner, register, traceBody } from './support.js';

/** The trace of an event received through `base`. */
const traceOf = (event: ReceivedEvent) => event.body.data.traceId as string;

/** A real EventSource through `base`, resuming after `lastEventId` if given, and the replica that serves it. */
const openStream = (base: string, token: string, lastEventId?: string) =>
  openEventStream(base, `token=${encodeURIComponent(token)}`, {
    headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    openTimeoutMs: 10_000,
  });

const until = (check: () => boolean, what: string) => waitUntil(check, what, 10_000);

/**
 * The event stream across replicas: each replica fans out the events every replica commits (LISTEN/NOTIFY), so a
 * client connected to one replica receives what the others ingest, in commit order (the order of the
 * organization's audit chain, whose entries are the trace events), and a reconnect to another replica with the
 * last id replays exactly what was missed.
 */
describe('event streams across replicas', () => {
  let cluster: Cluster;
  let db: pg.Pool;
  let owner: Owner;
  let agentKey: string;
  beforeAll(async () => {
    cluster = await startCluster();
    db = databaseOf(cluster);
    owner = await register(cluster.base, 'Streams');
    agentKey = (await createAgent(cluster.base, owner.token)).key;
  });
  afterAll(async () => {
    await db?.end();
    await cluster?.stop();
  });

  const streamToken = async (): Promise<string> => {
    const res = await call(cluster.base, 'POST', '/api/v1/auth/stream-token', { token: owner.token });
    expect(res.status).toBe(201);
    return res.body.data.token;
  };
  const ingest = async (base: string, i: number): Promise<string> => {
    const res = await call(base, 'POST', '/api/v1/traces', { apiKey: agentKey, body: traceBody(i) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id;
  };
  /** The organization's trace ids in the order of its audit chain: the commit order. */
  const chainOrder = async (traceIds: string[]): Promise<string[]> => {
    const { rows } = await db.query<{ target_id: string }>(
      `select target_id from audit_entries where organization_id = $1 and target_id = any($2) order by sequence`,
      [owner.orgId, traceIds],
    );
    return rows.map((r) => r.target_id);
  };
  const others = (name: string | null) => cluster.replicas.filter((r) => r.name !== name);

  let lastSeen: ReceivedEvent | undefined;
  let streamedBy: string | null = null;

  it("a client on one replica receives the other replicas' traces once each, in commit order", async () => {
    const stream = openStream(cluster.base, await streamToken());
    await stream.opened;
    streamedBy = stream.servedBy();
    expect(streamedBy).toMatch(/^api-[123]$/);
    const [second, third] = others(streamedBy);

    // One after another, alternating between the two other replicas.
    const sequential: string[] = [];
    for (let i = 0; i < 12; i++) sequential.push(await ingest((i % 2 ? third : second)!.base!, i));
    await until(() => stream.received.length >= 12, '12 events');
    expect(stream.received.map(traceOf)).toEqual(sequential);

    // At once, on both: the stream's order is the chain's.
    const concurrent = await Promise.all(
      Array.from({ length: 24 }, (_, i) => ingest((i % 2 ? third : second)!.base!, 100 + i)),
    );
    await until(() => stream.received.length >= 36, '36 events');
    const burst = stream.received.slice(12).map(traceOf);
    expect(new Set(burst).size).toBe(24);
    expect(burst).toEqual(await chainOrder(concurrent));
    // A moment more: nothing arrives twice.
    await new Promise((r) => setTimeout(r, 300));
    expect(stream.received).toHaveLength(36);
    lastSeen = stream.received.at(-1);
    stream.source.close();
  });

  it('a reconnect to another replica with Last-Event-ID replays what was missed, then goes live, nothing twice', async () => {
    expect(lastSeen).toBeDefined();
    const missed: string[] = [];
    for (let i = 0; i < 8; i++) missed.push(await ingest(cluster.base, 200 + i));

    // Directly on a replica other than the one that served the first connection.
    const elsewhere = others(streamedBy)[0]!;
    const stream = openStream(elsewhere.base!, await streamToken(), lastSeen!.id);
    await stream.opened;
    await until(() => stream.received.length >= 8, 'the replay');
    expect(stream.received.map(traceOf)).toEqual(missed);

    const live = await ingest(others(elsewhere.name)[0]!.base!, 300);
    await until(() => stream.received.length >= 9, 'the live event');
    expect(traceOf(stream.received.at(-1)!)).toBe(live);
    await new Promise((r) => setTimeout(r, 300));
    expect(new Set(stream.received.map((r) => r.id)).size).toBe(9);
    expect(stream.received).toHaveLength(9);
    stream.source.close();
  });

  it('a WebSocket through the proxy replays after lastEventId and receives every replica’s events live', async () => {
    const before = await ingest(cluster.base, 400);
    // A trace's event is its audit entry, under the entry's id.
    const { rows } = await db.query<{ id: string }>(
      `select id from audit_entries where organization_id = $1 and target_id = $2`,
      [owner.orgId, before],
    );
    const eventId = rows[0]?.id;
    expect(eventId).toBeDefined();
    const wsBase = cluster.base.replace(/^http/, 'ws');
    const missed = [await ingest(cluster.base, 401), await ingest(cluster.base, 402)];
    const socket = new WebSocket(
      `${wsBase}/api/v1/events/ws?token=${encodeURIComponent(await streamToken())}&lastEventId=${eventId}`,
    );
    const messages: { id: string; data: { traceId: string } }[] = [];
    socket.on('message', (m) => messages.push(JSON.parse(String(m))));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    await until(() => messages.length >= 2, 'the WebSocket replay');
    expect(messages.map((m) => m.data.traceId)).toEqual(missed);
    const live: string[] = [];
    for (const replica of cluster.replicas) live.push(await ingest(replica.base!, 500 + live.length));
    await until(() => messages.length >= 5, 'the live events');
    expect(messages.slice(2).map((m) => m.data.traceId)).toEqual(live);
    socket.close();
  });
});
