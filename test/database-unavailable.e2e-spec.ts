import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type pg from 'pg';
import { createPostgresHandle } from '#platform';
import { TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { freshPostgresUrl } from './support/database.js';
import { adminClient } from './support/scratch-database.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { traceBody } from './support/traces-suite.js';

const onPostgres = inject('databaseMode') === 'postgres';

/**
 * The database unable to serve a request now (a connection terminated, too many clients, a deadlock, a statement or
 * lock timeout: libs/platform/src/db/database-errors.ts) is a 503 SERVICE_UNAVAILABLE with Retry-After, not a 500: the
 * request may be sent again as it is. Shown with a real failure: the backend serving the request is terminated while
 * it waits for a row lock, as a failover or an operator would end it; and the database taken away altogether (a proxy
 * in front of it refuses new connections and resets the open ones). PostgreSQL only: PGlite runs in the process.
 */
describe.runIf(onPostgres)('the database unable to serve a request', () => {
  let ctx: TestContext;
  let admin: pg.Client;
  let locker: pg.Client;
  beforeAll(async () => {
    ctx = await TestContext.create();
    admin = await adminClient();
  });
  afterAll(async () => {
    await locker?.end().catch(() => undefined);
    await admin?.end();
    await ctx?.close();
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when the backend is terminated, and changes nothing', async () => {
    const owner = await ctx.register({ organizationName: 'Before' });
    const [[database]] = (await ctx.db.textRows('select current_database()', [])) as [[string]];
    // Another session holds the organization's row, so the rename waits on its lock.
    const url = new URL(inject('pgTemplateUrl'));
    url.pathname = `/${database}`;
    locker = new (await import('pg')).default.Client({ connectionString: url.href });
    await locker.connect();
    await locker.query('begin');
    await locker.query('select 1 from organizations where id = $1 for update', [owner.organization.id]);
    const renaming = ctx.patch('/api/v1/organizations/current', {
      token: owner.token,
      body: { name: 'After' },
    });
    let terminated = 0;
    for (const deadline = Date.now() + 10_000; terminated === 0 && Date.now() < deadline;) {
      const { rows } = await admin.query<{ n: number }>(
        `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
          where datname = $1 and wait_event_type = 'Lock' and pid <> $2`,
        [database, (locker as unknown as { processID: number }).processID],
      );
      terminated = rows[0]!.n;
      if (terminated === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(terminated).toBe(1);
    const res = await renaming;
    const body = expectErrorEnvelope(res, 503, 'SERVICE_UNAVAILABLE');
    expect(body.error).toBe('The database cannot serve the request now; retry shortly');
    expect(res.headers['retry-after']).toBe('1');
    expect(body.requestId).toBe(res.headers['x-request-id']);
    await locker.query('rollback');

    // Nothing changed, and the same request, sent again, goes through.
    const current = await ctx.get('/api/v1/organizations/current', { token: owner.token });
    expect(current.json().data.name).toBe('Before');
    const again = await ctx.patch('/api/v1/organizations/current', {
      token: owner.token,
      body: { name: 'After' },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data.name).toBe('After');
  });
});

describe.runIf(onPostgres)('the database out of reach', () => {
  let ctx: TestContext;
  let proxy: TcpProxy;
  beforeAll(async () => {
    const url = await freshPostgresUrl();
    const { hostname, port } = new URL(url);
    proxy = await TcpProxy.start({ host: hostname, port: Number(port) });
    // A short connection timeout: the proxy refuses at once, this only bounds a test that would otherwise hang.
    ctx = await TestContext.create({ db: createPostgresHandle(proxy.through(url), 5) });
  });
  afterAll(async () => {
    await proxy?.restore();
    await ctx?.close();
    await proxy?.cut();
  });

  it('answers 503 with Retry-After on every kind of route while the database is gone, and serves again after', async () => {
    const owner = await ctx.register({ organizationName: 'Reachable' });
    const agent = await ctx.newAgent(owner.organization.id, 'Agent');
    expect((await ctx.get('/api/v1/organizations/current', { token: owner.token })).statusCode).toBe(200);

    await proxy.cut();
    const unavailable = async (res: Awaited<ReturnType<TestContext['get']>>) => {
      const body = expectErrorEnvelope(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('1');
      return body;
    };
    // A read behind a session, a sign-in, an ingested trace (the trace writer's own 503).
    const read = await ctx.get('/api/v1/organizations/current', { token: owner.token });
    expect((await unavailable(read)).error).toBe('The database cannot serve the request now; retry shortly');
    await unavailable(
      await ctx.post('/api/v1/auth/login', { body: { email: owner.user.email, password: 'x'.repeat(12) } }),
    );
    await unavailable(await ctx.post('/api/v1/traces', { apiKey: agent.key, body: traceBody() }));
    // The readiness probe says so too; liveness does not depend on the database.
    expect((await ctx.get('/api/v1/health/ready')).statusCode).toBe(503);
    expect((await ctx.get('/api/v1/health/live')).statusCode).toBe(200);

    await proxy.restore();
    const back = await ctx.get('/api/v1/organizations/current', { token: owner.token });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json().data.name).toBe('Reachable');
    const trace = await ctx.post('/api/v1/traces', { apiKey: agent.key, body: traceBody() });
    expect(trace.statusCode, trace.body).toBe(201);
  });
});
