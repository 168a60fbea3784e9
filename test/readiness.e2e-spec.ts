import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Readiness } from '#platform';
import { TestContext } from './support/app.js';

type Rows<T> = { rows: T[] };

/**
 * The probes (docs/operators.md, "Readiness, liveness and the drain"): liveness is the process answering; readiness is
 * the database answering with every migration applied and the process not draining. The SIGTERM drain itself, on
 * real processes behind a real load balancer, is in test/cluster/.
 */
describe('readiness and liveness', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  it('answers liveness at the root and under /api/v1, without a completion line or credentials', async () => {
    for (const url of ['/health/live', '/api/v1/health/live']) {
      const res = await ctx.get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.json().data).toMatchObject({ status: 'ok', uptime: expect.any(Number) });
    }
  });

  it('is ready when the database answers, every migration is applied and the process is not draining', async () => {
    for (const url of ['/health/ready', '/api/v1/health/ready', '/health/ready?probe=1']) {
      const res = await ctx.get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.json().data).toEqual({
        status: 'ready',
        checks: { database: 'up', migrations: 'current', draining: false },
      });
    }
  });

  it('is not ready while a migration this build knows is missing from the database, and ready again once applied', async () => {
    const { rows } = (await ctx.db.db.execute(
      sql`select id, hash, created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`,
    )) as unknown as Rows<{ id: number; hash: string; created_at: string }>;
    const newest = rows[0]!;
    await ctx.db.db.execute(sql`delete from drizzle.__drizzle_migrations where id = ${newest.id}`);
    try {
      const res = await ctx.get('/health/ready');
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({
        code: 'SERVICE_UNAVAILABLE',
        checks: { database: 'up', migrations: 'pending', draining: false },
      });
      // Liveness and the compatibility health check do not depend on it.
      expect((await ctx.get('/health/live')).statusCode).toBe(200);
      expect((await ctx.get('/health')).statusCode).toBe(200);
    } finally {
      await ctx.db.db.execute(
        sql`insert into drizzle.__drizzle_migrations (id, hash, created_at) values (${newest.id}, ${newest.hash}, ${newest.created_at})`,
      );
    }
    expect((await ctx.get('/health/ready')).statusCode).toBe(200);
  });

  it('a database that is a newer build ahead (a later migration recorded) is still ready: migrations are additive', async () => {
    const later = Date.now() + 86_400_000;
    await ctx.db.db.execute(
      sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('later-build', ${later})`,
    );
    try {
      expect((await ctx.get('/health/ready')).json().data.checks.migrations).toBe('current');
    } finally {
      await ctx.db.db.execute(sql`delete from drizzle.__drizzle_migrations where hash = 'later-build'`);
    }
  });

  it('once draining, readiness answers 503 while every other route is still served', async () => {
    const owner = await ctx.register({ organizationName: 'Draining' });
    ctx.service(Readiness).drain();
    const res = await ctx.get('/health/ready');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      error: expect.stringMatching(/draining/i),
      checks: { database: 'up', migrations: 'current', draining: true },
    });
    expect((await ctx.get('/health/live')).statusCode).toBe(200);
    expect((await ctx.get('/health')).statusCode).toBe(200);
    const me = await ctx.get('/api/v1/auth/me', { token: owner.token });
    expect(me.statusCode).toBe(200);
  });
});
