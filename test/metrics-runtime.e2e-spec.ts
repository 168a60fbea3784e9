import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveTarget, SsrfRefusal } from '#platform';
import { replicaContext, TestContext } from './support/app.js';
import { type Exposition, scrape } from './support/metrics-scrape.js';

// What the process runs on (docs/operators.md, "Metrics"): the runtime's default metrics, the event loop, the
// database pool and its failed queries, Redis, and the SSRF guard's refusals.

const TOKEN = 'metrics-runtime-token-0123456789-abcdefg';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('runtime metrics', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ config: { metrics: { enabled: true, host: '127.0.0.1', token: TOKEN } } });
  });
  afterAll(async () => ctx?.close());

  const queryErrors = (e: Exposition) => e.sum('governance_db_query_errors_total');

  it("counts a query the database refuses, once, and not an application's error in a transaction", async () => {
    const before = queryErrors(await scrape(ctx, TOKEN));
    await expect(ctx.db.db.execute(sql`select * from metrics_no_such_table`)).rejects.toThrow();
    const once = queryErrors(await scrape(ctx, TOKEN));
    expect(once - before).toBe(1);

    await expect(
      ctx.db.db.transaction(async (tx) => {
        await tx.execute(sql`select * from metrics_no_such_table`);
      }),
    ).rejects.toThrow();
    const inTransaction = queryErrors(await scrape(ctx, TOKEN));
    expect(inTransaction - once).toBe(1);

    await expect(
      ctx.db.db.transaction(async () => {
        throw new Error('an application error, not a query');
      }),
    ).rejects.toThrow('an application error');
    expect(queryErrors(await scrape(ctx, TOKEN))).toBe(inTransaction);
  });

  it('reads the pool at scrape time: node-postgres by state, PGlite its one connection', async () => {
    const exposition = await scrape(ctx, TOKEN);
    const state = (name: string) => exposition.select('governance_db_pool_connections', { state: name });
    if (ctx.db.driver === 'postgres') {
      expect(state('total')[0]!.value).toBeGreaterThanOrEqual(1);
      expect(state('idle')[0]!.value).toBeLessThanOrEqual(state('total')[0]!.value);
      expect(state('waiting')[0]!.value).toBe(0);
    } else {
      expect(state('total')[0]!.value).toBe(1);
      expect(state('idle')).toEqual([]);
      expect(state('waiting')).toEqual([]);
    }
  });

  it('counts refusals of the SSRF guard', async () => {
    const before = (await scrape(ctx, TOKEN)).sum('governance_ssrf_refusals_total');
    await expect(resolveTarget(new URL('http://127.0.0.1:9/hook'), false)).rejects.toThrow(SsrfRefusal);
    await expect(resolveTarget(new URL('http://[::1]/hook'), false)).rejects.toThrow(SsrfRefusal);
    await resolveTarget(new URL('http://127.0.0.1/hook'), true);
    expect((await scrape(ctx, TOKEN)).sum('governance_ssrf_refusals_total') - before).toBe(2);
  });

  it("samples the event loop's delay once a second", async () => {
    const count = async () => (await scrape(ctx, TOKEN)).sum('governance_event_loop_delay_seconds_count');
    const before = await count();
    await sleep(2200);
    expect(await count()).toBeGreaterThanOrEqual(before + 1);
  });

  it("has the runtime's default metrics once, in every application of the process", async () => {
    const replica = await replicaContext(ctx);
    try {
      for (const text of [(await scrape(ctx, TOKEN)).text, (await scrape(replica, TOKEN)).text]) {
        for (const name of [
          'process_cpu_user_seconds_total',
          'nodejs_heap_size_total_bytes',
          'nodejs_gc_duration_seconds',
        ]) {
          expect(text.split(`# TYPE ${name} `).length - 1, name).toBe(1);
        }
      }
    } finally {
      await replica.close();
    }
  });

  it('has no Redis gauge without REDIS_URL', async () => {
    expect((await scrape(ctx, TOKEN)).select('governance_redis_up')).toEqual([]);
  });
});

describe('runtime metrics with REDIS_URL', () => {
  it('reports Redis up once its connection is ready, and down when it cannot connect', async () => {
    const up = await TestContext.create({
      config: { metrics: { enabled: true, host: '127.0.0.1', token: TOKEN }, redisUrl: REDIS_URL },
    });
    try {
      const deadline = Date.now() + 5000;
      let value: number | undefined;
      while (Date.now() < deadline) {
        value = (await scrape(up, TOKEN)).select('governance_redis_up')[0]?.value;
        if (value === 1) break;
        await sleep(20);
      }
      expect(value).toBe(1);
    } finally {
      await up.close();
    }
    // Nothing listens on port 1.
    const down = await TestContext.create({
      config: { metrics: { enabled: true, host: '127.0.0.1', token: TOKEN }, redisUrl: 'redis://127.0.0.1:1' },
    });
    try {
      expect((await scrape(down, TOKEN)).select('governance_redis_up')[0]?.value).toBe(0);
    } finally {
      await down.close();
    }
  });
});
