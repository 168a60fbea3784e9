import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type pg from 'pg';
import { TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { adminClient } from './support/scratch-database.js';

const onPostgres = inject('databaseMode') === 'postgres';

/**
 * The database unable to serve a request now (a connection terminated, too many clients, a deadlock, a statement or
 * lock timeout: libs/platform/src/db/database-errors.ts) is a 503 SERVICE_UNAVAILABLE with Retry-After, not a 500: the
 * request may be sent again as it is. Shown with a real failure: the backend serving the request is terminated while
 * it waits for a row lock, as a failover or an operator would end it. PostgreSQL only: PGlite runs in the process.
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
