import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventSource } from 'eventsource';
import type pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { CHECK, type Cluster, startCluster } from '../../tools/cluster/cluster.mjs';
import { acknowledged, expectNothingLostOrDoubled, type Outcome, runLoad } from './load.js';
import { call, createAgent, databaseOf, type Owner, register } from './support.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long each webhook delivery is held before its answer: deliveries are in flight when a replica dies. */
const HOLD_MS = 800;
/** The webhook delivery's lease (libs/governance/src/webhooks/webhook-delivery.worker.ts). */
const WEBHOOK_LEASE_MS = 60_000;

interface Delivery {
  id: string;
  arrivedAt: number;
  /** Whether its answer was sent (false: the sender's connection closed first, as a killed process's does). */
  answered: boolean;
}

/** A real receiver that verifies each delivery's signature, and holds its answers for HOLD_MS while `hold.on`. */
async function startReceiver(): Promise<{
  server: Server;
  url: string;
  deliveries: Delivery[];
  forged: number;
  secret: { value: string };
  hold: { on: boolean };
}> {
  const deliveries: Delivery[] = [];
  const secret = { value: '' };
  // Answers are held only around the crash, so that the deliveries of the rest of the load do not queue up.
  const hold = { on: false };
  const state = { server: createServer(), forged: 0 };
  state.server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        new Webhook(secret.value).verify(body, req.headers as Record<string, string>);
      } catch {
        state.forged += 1;
      }
      const delivery: Delivery = {
        id: String(req.headers['webhook-id']),
        arrivedAt: Date.now(),
        answered: false,
      };
      deliveries.push(delivery);
      setTimeout(
        () => {
          if (res.destroyed) return;
          res.end('ok', () => (delivery.answered = true));
        },
        hold.on ? HOLD_MS : 0,
      );
    });
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/hooks`;
  return {
    server: state.server,
    url,
    deliveries,
    get forged() {
      return state.forged;
    },
    secret,
    hold,
  };
}

/**
 * A dashboard's event stream that outlives the replicas: a real EventSource through the proxy, which reconnects by
 * itself when a replica closes it (with the last id, as EventSource does), each time with a fresh stream token.
 */
function resumingSse(base: string, token: string) {
  const ids: string[] = [];
  let connections = 0;
  const source = new EventSource(`${base}/api/v1/events/stream?token=`, {
    fetch: async (input, init) => {
      connections += 1;
      const minted = await call(base, 'POST', '/api/v1/auth/stream-token', { token });
      const url = new URL(String(input));
      url.searchParams.set('token', minted.body.data.token);
      return fetch(url, init);
    },
  });
  for (const type of ['trace.approved', 'trace.flagged'])
    source.addEventListener(type, (e) => ids.push(e.lastEventId));
  return { source, ids, connections: () => connections };
}

/** The same over the WebSocket: on close 1001 it reconnects with lastEventId. */
function resumingWebSocket(base: string, token: string) {
  const ids: string[] = [];
  // The organization's other events (an audit checkpoint the worker publishes, say), which the SSE client above does
  // not listen for; the last id of any kind is where a reconnection resumes.
  const others: { id: string; type: string }[] = [];
  let last: string | undefined;
  const closes: { code: number; reason: string }[] = [];
  let stopped = false;
  let socket: WebSocket | null = null;
  const connect = async (): Promise<void> => {
    const minted = await call(base, 'POST', '/api/v1/auth/stream-token', { token });
    socket = new WebSocket(
      `${base.replace(/^http/, 'ws')}/api/v1/events/ws?token=${minted.body.data.token}${last ? `&lastEventId=${last}` : ''}`,
    );
    socket.on('message', (m) => {
      const event = JSON.parse(String(m)) as { id: string; type: string };
      last = event.id;
      if (event.type.startsWith('trace.')) ids.push(event.id);
      else others.push({ id: event.id, type: event.type });
    });
    socket.on('close', (code, reason) => {
      if (stopped) return;
      closes.push({ code, reason: String(reason) });
      setTimeout(() => void connect(), 200);
    });
    await new Promise<void>((resolve, reject) => {
      socket!.once('open', () => resolve());
      socket!.once('error', reject);
    });
  };
  return {
    ids,
    others,
    closes,
    connect,
    stop: () => {
      stopped = true;
      socket?.close();
    },
  };
}

/**
 * Failures under load, through the proxy: a replica killed with SIGKILL, then a rolling deploy (SIGTERM to each replica
 * in turn, started again once drained). Nothing acknowledged is lost, nothing is stored twice, the chains hold, the
 * proxy routes around the dead and the draining, streams resume where they were, and the webhook deliveries the dead
 * process held are sent by another process once their lease has passed.
 */
describe('a cluster under load, through a crash and a rolling deploy', () => {
  let cluster: Cluster;
  let db: pg.Pool;
  let orgs: (Owner & { key: string })[];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let killedAt = 0;

  beforeAll(async () => {
    receiver = await startReceiver();
    cluster = await startCluster({ env: { OUTBOX_RETRY_INTERVAL_MS: '1000' } });
    db = databaseOf(cluster);
    orgs = [];
    for (const name of ['Crash A', 'Crash B']) {
      const owner = await register(cluster.base, name);
      orgs.push({ ...owner, key: (await createAgent(cluster.base, owner.token)).key });
    }
    const policy = await call(cluster.base, 'POST', '/api/v1/policies', {
      token: orgs[0]!.token,
      body: {
        name: 'Refunds',
        outcome: 'flag',
        conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'refund' }],
      },
    });
    expect(policy.status).toBe(201);
    const hook = await call(cluster.base, 'POST', '/api/v1/webhooks', {
      token: orgs[0]!.token,
      body: { url: receiver.url, events: ['trace.flagged'] },
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    receiver.secret.value = hook.body.data.secret;
  });
  afterAll(async () => {
    await db?.end();
    await cluster?.stop();
    receiver?.server.closeAllConnections();
    receiver?.server.close();
  });

  it('50 clients for 20 s, one replica killed with SIGKILL midway: nothing acknowledged lost, nothing doubled', async () => {
    const victim = cluster.replicas[1]!;
    const load = runLoad({
      base: cluster.base,
      keys: orgs.map((o) => o.key),
      connections: 50,
      durationMs: 20_000,
      firstMarker: 1,
      flaggedEvery: 4,
    });
    await sleep(7000 - 2 * HOLD_MS);
    receiver.hold.on = true;
    await sleep(2 * HOLD_MS);
    killedAt = Date.now();
    victim.child!.kill('SIGKILL');
    const downAfterMs = await cluster.waitForState(victim.name, 'DOWN');
    receiver.hold.on = false;
    // Out of rotation within its health checks: `fall` failed checks `inter` apart, each at most `timeout`.
    expect(downAfterMs).toBeLessThanOrEqual(CHECK.fall * CHECK.interMs + CHECK.timeoutMs + 500);
    await sleep(4000);
    const restartedAt = Date.now();
    victim.start();
    await victim.ready();
    await cluster.waitForState(victim.name, 'UP');
    const outcomes = await load;

    expect(outcomes.length).toBeGreaterThan(500);
    // No answer from the dead replica between its death and its restart.
    const fromTheDead = outcomes.filter(
      (o) => o.servedBy === victim.name && o.at > killedAt && o.at < restartedAt,
    );
    expect(fromTheDead).toEqual([]);
    // Every keyed client got its trace acknowledged, retries included; an unkeyed one lost at most its request.
    const keyed = outcomes.filter((o) => o.key !== null);
    expect(keyed.filter((o) => !acknowledged(o))).toEqual([]);
    const failed = outcomes.filter((o) => !acknowledged(o));
    expect(failed.every((o) => o.status === 'error' || o.status === 502 || o.status === 503)).toBe(true);
    // Requests the proxy could not complete were those in flight on the victim when it died (about one per client).
    expect(failed.length + keyed.filter((o) => o.attempts > 1).length).toBeLessThanOrEqual(60);
    await expectNothingLostOrDoubled(db, cluster.base, orgs, outcomes);
  });

  it('a rolling deploy under load: each replica drains first; no client sees a 5xx or a reset; streams resume', async () => {
    const sse = resumingSse(cluster.base, orgs[0]!.token);
    const ws = resumingWebSocket(cluster.base, orgs[0]!.token);
    await ws.connect();
    await sleep(500);
    let deploying = true;
    const loads: Outcome[][] = [];
    const load = (async () => {
      for (let round = 0; deploying; round++) {
        loads.push(
          await runLoad({
            base: cluster.base,
            keys: orgs.map((o) => o.key),
            connections: 20,
            durationMs: 3000,
            keyedEvery: 1_000_000,
            firstMarker: 1_000_000 + round * 100_000,
          }),
        );
      }
    })();

    for (const replica of cluster.replicas) {
      await sleep(1500);
      const signalled = Date.now();
      replica.child!.kill('SIGTERM');
      // Readiness goes false first, while the process still serves.
      await expect
        .poll(async () => (await call(replica.base!, 'GET', '/health/ready')).status, {
          timeout: 1000,
          interval: 50,
        })
        .toBe(503);
      expect((await call(replica.base!, 'GET', '/health/live')).status).toBe(200);
      await cluster.waitForState(replica.name, 'DOWN');
      const drainedAt = Date.now();
      const exit = await replica.exited;
      const exitedAt = Date.now();
      expect(exit).not.toBeNull();
      // The proxy stopped routing to it before it closed, and it closed once the drain had passed.
      expect(drainedAt).toBeLessThan(exitedAt);
      expect(exitedAt - signalled).toBeGreaterThanOrEqual(2000);
      replica.start();
      await replica.ready();
      await cluster.waitForState(replica.name, 'UP');
    }
    await sleep(1500);
    deploying = false;
    await load;
    const outcomes = loads.flat();
    expect(outcomes.length).toBeGreaterThan(300);
    const bad = outcomes.filter((o) => o.status !== 201 && o.status !== 202);
    expect(bad, 'answers other than 201/202 during the deploy').toEqual([]);
    expect(new Set(outcomes.map((o) => o.servedBy))).toEqual(new Set(['api-1', 'api-2', 'api-3']));
    await expectNothingLostOrDoubled(db, cluster.base, orgs, outcomes);

    // Every trace event of the organization from the deploy reached both streams once, across their reconnections.
    const { rows } = await db.query<{ id: string }>(
      `select a.id from audit_entries a join traces t on t.id = a.target_id
       where a.organization_id = $1 and (t.metadata->>'marker')::int >= 1000000 order by a.sequence`,
      [orgs[0]!.orgId],
    );
    const expected = rows.map((r) => r.id);
    await expect.poll(() => sse.ids.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(expected.length);
    await expect.poll(() => ws.ids.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(expected.length);
    await sleep(300);
    for (const received of [sse.ids, ws.ids]) {
      // Nothing repeated, nothing lost.
      expect(new Set(received).size).toBe(received.length);
      const got = new Set(received);
      expect(expected.filter((id) => !got.has(id))).toEqual([]);
      // Anything more can only be an event of the organization from before the deploy's load.
      const wanted = new Set(expected);
      const extra = received.filter((id) => !wanted.has(id));
      if (extra.length > 0) {
        const { rows: others } = await db.query<{ id: string; event_type: string; marker: number | null }>(
          `select a.id, a.event_type, (t.metadata->>'marker')::int as marker from audit_entries a
           left join traces t on t.id = a.target_id where a.id = any($1) and a.organization_id = $2`,
          [extra, orgs[0]!.orgId],
        );
        expect(others.length, JSON.stringify({ extra, others })).toBe(extra.length);
        expect(
          others.every((o) => o.event_type.startsWith('trace.') && (o.marker ?? 0) < 1_000_000),
          JSON.stringify(others),
        ).toBe(true);
      }
    }
    // Events other than traces on the WebSocket are stored events of the organization (none of another's).
    if (ws.others.length > 0) {
      const { rows: stored } = await db.query<{ id: string; type: string }>(
        'select id, type from domain_events where id = any($1) and organization_id = $2',
        [ws.others.map((o) => o.id), orgs[0]!.orgId],
      );
      expect(new Set(stored.map((r) => r.id)), JSON.stringify(ws.others)).toEqual(
        new Set(ws.others.map((o) => o.id)),
      );
    }
    // Each stream was closed by a draining replica at least once, and resumed.
    expect(sse.connections()).toBeGreaterThan(1);
    expect(ws.closes.length).toBeGreaterThan(0);
    expect(ws.closes.every((c) => c.code === 1001 && /reconnect with lastEventId/.test(c.reason))).toBe(true);
    sse.source.close();
    ws.stop();
  });

  it('the webhook deliveries the killed replica held are sent by another process once their lease has passed', async () => {
    expect(killedAt).toBeGreaterThan(0);
    expect(receiver.forged).toBe(0);
    // Deliveries under way in the killed process: they arrived before its death and were never answered.
    const interrupted = [
      ...new Set(
        receiver.deliveries.filter((d) => !d.answered && d.arrivedAt <= killedAt + 50).map((d) => d.id),
      ),
    ];
    expect(interrupted.length).toBeGreaterThan(0);
    const sentAgain = () =>
      interrupted.filter((id) =>
        receiver.deliveries.some((d) => d.id === id && d.answered && d.arrivedAt > killedAt),
      );
    await expect
      .poll(() => sentAgain().length, {
        timeout: Math.max(0, killedAt + WEBHOOK_LEASE_MS + 20_000 - Date.now()),
        interval: 500,
      })
      .toBe(interrupted.length);
    // Not before the lease: the dead process held them until then.
    for (const id of interrupted) {
      const again = receiver.deliveries.find((d) => d.id === id && d.answered && d.arrivedAt > killedAt)!;
      expect(again.arrivedAt - killedAt).toBeGreaterThanOrEqual(WEBHOOK_LEASE_MS - HOLD_MS - 1000);
    }
    // And every flagged trace of the organization was delivered, answered, once its attempt completed.
    const { rows } = await db.query<{ id: string }>(
      `select id from audit_entries where organization_id = $1 and event_type = 'trace.flagged'`,
      [orgs[0]!.orgId],
    );
    await expect
      .poll(() => rows.filter((r) => !receiver.deliveries.some((d) => d.id === r.id && d.answered)).length, {
        timeout: 20_000,
      })
      .toBe(0);
  });
});
