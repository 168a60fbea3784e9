import { createServer, type Server, Socket } from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildService, type StartedService, startService } from './support/built-service.js';
import { adminClient, scratchDatabase } from './support/scratch-database.js';

const onPostgres = inject('databaseMode') === 'postgres';

/**
 * A TCP relay to PostgreSQL that can stall, as a network partition or a hung server looks to a client: while stalled
 * it accepts connections and reads what it is sent but forwards nothing either way; resumed, it forwards what it held,
 * in order, and connects what it accepted meanwhile.
 */
class StallingRelay {
  private stalled = false;
  private held: (() => void)[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<StallingRelay> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const relay = new StallingRelay(server, (server.address() as { port: number }).port);
    server.on('connection', (client) => relay.relay(client, target));
    return relay;
  }

  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    this.stalled = false;
    for (const step of this.held.splice(0)) step();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private relay(client: Socket, target: { host: string; port: number }): void {
    const upstream = new Socket();
    const whenFlowing = (step: () => void) => (this.stalled ? this.held.push(step) : step());
    // Written before the connection is up, bytes wait in the socket: the connect goes first in the held steps.
    whenFlowing(() => upstream.connect(target.port, target.host));
    const forward = (from: Socket, to: Socket) => {
      this.sockets.add(from);
      from.on('data', (chunk: Buffer) => whenFlowing(() => !to.destroyed && to.write(chunk)));
      // The server's last words (a FATAL before it closes) reach the client before the end does.
      from.on('end', () => whenFlowing(() => to.end()));
      from.on('error', () => to.destroy());
      from.on('close', () => this.sockets.delete(from));
    };
    forward(client, upstream);
    forward(upstream, client);
  }
}

interface Answer {
  status: number;
  body: {
    success?: boolean;
    code?: string;
    error?: string;
    checks?: unknown;
    data?: Record<string, unknown>;
  };
  ms: number;
  retryAfter: string | null;
}

async function get(service: StartedService, path: string): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${service.base}${path}`).catch((err: unknown) => {
    const { exitCode, signalCode } = service.child;
    if (exitCode === null && signalCode === null) throw err;
    throw new Error(`GET ${path}: the service has exited (code ${exitCode}, signal ${signalCode})`);
  });
  return {
    status: res.status,
    body: (await res.json()) as Answer['body'],
    ms: performance.now() - started,
    retryAfter: res.headers.get('retry-after'),
  };
}

const DOWN = { database: 'down', migrations: 'unknown', draining: false };
const READY = { status: 'ready', checks: { database: 'up', migrations: 'current', draining: false } };

/** Readiness is refused, with the envelope and its checks, on both paths; liveness is not. */
async function expectNotReadyButLive(service: StartedService): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const path of ['/health/ready', '/api/v1/health/ready']) {
    const res = await get(service, path);
    expect(res.status, path).toBe(503);
    // As the OpenAPI document says of every 503.
    expect(res.retryAfter, path).toBe('1');
    expect(res.body, path).toEqual({
      success: false,
      code: 'SERVICE_UNAVAILABLE',
      error: 'Database check failed',
      checks: DOWN,
    });
    answers.push(res);
  }
  for (const path of ['/health/live', '/api/v1/health/live']) {
    const res = await get(service, path);
    expect(res.status, path).toBe(200);
    expect(res.body.data, path).toEqual({ status: 'ok', uptime: expect.any(Number) });
  }
  return answers;
}

async function expectReadyAgain(service: StartedService): Promise<void> {
  await expect
    .poll(async () => (await get(service, '/health/ready')).status, { timeout: 10_000, interval: 50 })
    .toBe(200);
  expect((await get(service, '/api/v1/health/ready')).body.data).toEqual(READY);
}

/**
 * The probes when PostgreSQL cannot be reached (docs/operators.md, "Readiness, liveness and the drain"): readiness
 * answers 503 SERVICE_UNAVAILABLE with `checks` saying the database is down and the migrations unknown, so that the
 * balancer takes the replica out of rotation, while liveness still answers 200, so that it is not restarted. The
 * built service runs on a database of its own behind a relay: the database refuses connections for real (ALTER
 * DATABASE … ALLOW_CONNECTIONS false, its sessions terminated), or the relay stops passing bytes (a hung database,
 * which only the check's 250 ms budget ends). PostgreSQL only: the embedded database cannot be taken away.
 */
describe.runIf(onPostgres)('readiness when the database is unreachable', () => {
  let build: ReturnType<typeof buildService>;
  let database: { name: string; url: string };
  let relay: StallingRelay;
  let service: StartedService;
  let admin: pg.Client;

  beforeAll(async () => {
    build = buildService();
    database = await scratchDatabase();
    const target = new URL(database.url);
    relay = await StallingRelay.start({ host: target.hostname, port: Number(target.port || 5432) });
    const viaRelay = new URL(database.url);
    viaRelay.host = `127.0.0.1:${relay.port}`;
    service = await startService(build.entry, { DATABASE_URL: viaRelay.href });
    admin = await adminClient();
  });
  afterAll(async () => {
    relay?.resume();
    await admin?.query(`alter database ${database.name} allow_connections true`).catch(() => undefined);
    await admin?.end();
    await service?.stop();
    await relay?.close();
    build?.remove();
  });

  it('is ready while the database answers', async () => {
    for (const path of ['/health/ready', '/api/v1/health/ready']) {
      const res = await get(service, path);
      expect(res.status, path).toBe(200);
      expect(res.body).toEqual({ success: true, data: READY });
    }
  });

  it('answers 503 with database down and migrations unknown while the database refuses connections, live 200, and is ready again once it accepts them', async () => {
    await admin.query(`alter database ${database.name} allow_connections false`);
    try {
      const { rows } = await admin.query<{ ended: boolean }>(
        'select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = $1',
        [database.name],
      );
      expect(rows.length, "the service's pool had connections to end").toBeGreaterThan(0);
      await expectNotReadyButLive(service);
      // A probe's 503 is its answer, not a failure of the service: nothing is logged as an error for it.
      expect(service.logs.filter((line) => line.msg === 'Unhandled error')).toEqual([]);
      // The compatibility health check says the same.
      const health = await get(service, '/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', checks: { database: 'down' } });
    } finally {
      await admin.query(`alter database ${database.name} allow_connections true`);
    }
    await expectReadyAgain(service);
  });

  it('answers 503 within its 250 ms budget while the database hangs, live 200, and is ready again once it answers', async () => {
    relay.stall();
    try {
      const answers = await expectNotReadyButLive(service);
      for (const { ms } of answers) {
        // The check gave the database its whole budget (a refusal answers at once) ...
        expect(ms).toBeGreaterThanOrEqual(240);
        // ... and then answered, instead of waiting for the database (a loaded machine may add to the 250 ms).
        expect(ms).toBeLessThan(5_000);
      }
    } finally {
      relay.resume();
    }
    await expectReadyAgain(service);
  });

  it('survives connections ended while requests hold them: the process stays up and is ready again', async () => {
    const json = { 'content-type': 'application/json' };
    const registered = await fetch(`${service.base}/api/v1/auth/register`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        name: 'Ended',
        email: `ended-${Date.now()}@example.com`,
        password: 'Ended-pass-123',
        organizationName: 'Ended',
      }),
    });
    expect(registered.status).toBe(201);
    const { token } = ((await registered.json()) as { data: { token: string } }).data;
    const agent = await fetch(`${service.base}/api/v1/agents`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'ended' }),
    });
    expect(agent.status).toBe(201);
    const { apiKey } = ((await agent.json()) as { data: { apiKey: string } }).data;
    // Traces, each written in a transaction on a connection the pool lends, while the backends are terminated.
    let stop = false;
    const statuses = new Map<number, number>();
    const load = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const res = await fetch(`${service.base}/api/v1/traces`, {
          method: 'POST',
          headers: { ...json, 'x-api-key': apiKey },
          body: JSON.stringify({
            inputContext: { prompt: 'Is the refund possible?' },
            outputDecision: { action: 'llm_response', text: 'Yes, within 30 days.' },
            confidence: 0.9,
          }),
        });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    });
    let ended = 0;
    for (let round = 0; round < 20; round++) {
      await new Promise((r) => setTimeout(r, 50));
      const { rows } = await admin.query<{ ended: boolean }>(
        `select pg_terminate_backend(pid) as ended from pg_stat_activity
          where datname = $1 and pid <> pg_backend_pid() and state <> 'idle'`,
        [database.name],
      );
      ended += rows.length;
    }
    stop = true;
    await Promise.all(load);
    expect(ended, 'backends were ended while in use').toBeGreaterThan(0);
    expect(service.child.exitCode).toBeNull();
    expect(service.child.signalCode).toBeNull();
    // Every request was answered (stored, or refused for the lost connection), none dropped with the connection.
    const answered = JSON.stringify([...statuses]);
    expect(
      [...statuses.keys()].every((status) => [201, 503].includes(status)),
      answered,
    ).toBe(true);
    expect(statuses.get(201) ?? 0, answered).toBeGreaterThan(0);
    await expectReadyAgain(service);
  });
});
