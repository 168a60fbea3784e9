import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, JobScheduler, Metrics, ScheduledJobsRepository } from '#platform';
import { replicaContext, TestContext } from './support/app.js';
import { freshDatabase, replicaHandle } from './support/database.js';

/** The one job every process with WORKERS=on runs on its own timer; every other job runs once per period. */
const PARALLEL = ['outbox'];

interface PeriodRow {
  name: string;
  last_run_by: string;
  /** next_run_at - last_run_at, in ms (both on the database's clock). */
  period_ms: number;
}

async function periods(db: DatabaseHandle): Promise<PeriodRow[]> {
  const result = (await db.db.execute(
    sql`select name, last_run_by,
          (extract(epoch from next_run_at - last_run_at) * 1000)::int as period_ms
        from scheduled_jobs order by name`,
  )) as unknown as { rows: PeriodRow[] };
  return result.rows;
}

/** A counter of the scheduler's, by job, in an application's registry. */
async function jobCounter(ctx: TestContext, name: string, labels: Record<string, string> = {}) {
  const metric = ctx.service(Metrics).registry.getSingleMetric(name);
  const values = metric ? (await metric.get()).values : [];
  const byJob = new Map<string, number>();
  for (const v of values) {
    if (!Object.entries(labels).every(([k, l]) => v.labels[k] === l)) continue;
    const job = String(v.labels.job_name);
    byJob.set(job, (byJob.get(job) ?? 0) + v.value);
  }
  return byJob;
}

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The scheduler's once-per-period jobs across processes (libs/platform/src/scheduler/job-scheduler.ts): a period is
 * claimed in scheduled_jobs on the database's clock, by one process only; runNow runs whatever the period.
 */
describe('scheduled jobs: one run per period across processes', () => {
  describe('the claim (ScheduledJobsRepository), from two processes on one database', () => {
    let db: DatabaseHandle;
    let other: { handle: DatabaseHandle; close: () => Promise<void> };
    let a: ScheduledJobsRepository;
    let b: ScheduledJobsRepository;
    beforeAll(async () => {
      db = await freshDatabase();
      // On PostgreSQL a second pool, as another process has; on PGlite the same handle.
      other = await replicaHandle(db);
      a = new ScheduledJobsRepository(db);
      b = new ScheduledJobsRepository(other.handle);
    });
    afterAll(async () => {
      await other?.close();
      await db?.close();
    });

    it('gives a period to the first claim only; the next one once the period is over', async () => {
      expect(await a.claim('probe', 400, 0, 'process-a')).toBe(true);
      expect(await b.claim('probe', 400, 0, 'process-b')).toBe(false);
      expect(await a.claim('probe', 400, 0, 'process-a')).toBe(false);
      expect(await periods(db)).toEqual([{ name: 'probe', last_run_by: 'process-a', period_ms: 400 }]);
      await new Promise((r) => setTimeout(r, 450));
      expect(await b.claim('probe', 400, 0, 'process-b')).toBe(true);
      expect(await a.claim('probe', 400, 0, 'process-a')).toBe(false);
      expect((await periods(db))[0]).toMatchObject({ last_run_by: 'process-b' });
    });

    it('counts a period over up to the early margin before its end', async () => {
      expect(await a.claim('early', 1000, 300, 'process-a')).toBe(true);
      expect(await b.claim('early', 1000, 300, 'process-b')).toBe(false);
      await new Promise((r) => setTimeout(r, 750));
      expect(await b.claim('early', 1000, 300, 'process-b')).toBe(true);
    });

    it('of many claims at once, on a job that never ran and on one whose period is over, one wins', async () => {
      const race = (name: string) =>
        Promise.all(
          Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).claim(name, 60_000, 0, `process-${i}`)),
        );
      const first = await race('race');
      expect(first.filter(Boolean)).toHaveLength(1);
      await db.db.execute(sql`update scheduled_jobs set next_run_at = now() where name = 'race'`);
      const second = await race('race');
      expect(second.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('two applications with WORKERS=on on one database', () => {
    let first: TestContext;
    let second: TestContext;
    let once: string[];
    beforeAll(async () => {
      first = await TestContext.create({ config: { workers: true } });
      once = first
        .service(JobScheduler)
        .names.filter((n) => !PARALLEL.includes(n))
        .sort();
      // Each once-per-period job ticks at once on start; on a new database, every period is over.
      await until('the first start runs', async () => (await periods(first.db)).length === once.length);
      second = await replicaContext(first, { config: { ...first.config, workers: true } });
      await until('the second start ticks', async () => {
        const lost = await jobCounter(second, 'governance_job_claims_lost_total');
        return once.every((n) => lost.get(n) === 1);
      });
    });
    afterAll(async () => {
      await second?.close();
      await first?.close();
    });

    it('ran each once-per-period job once at the first start; the second start lost every period', async () => {
      expect(once).toEqual(expect.arrayContaining(['alerts', 'audit-checkpoints', 'trace-retention']));
      const rows = await periods(first.db);
      expect(rows.map((r) => r.name)).toEqual(once);
      const instance = first.service(JobScheduler).instance;
      for (const row of rows) expect(row.last_run_by, row.name).toBe(instance);
      // The period is the job's interval, on the database's clock.
      const alerts = rows.find((r) => r.name === 'alerts')!;
      expect(alerts.period_ms).toBe(first.config.alertIntervalMs);

      const firstRuns = await jobCounter(first, 'governance_job_runs_total', { result: 'success' });
      const secondRuns = await jobCounter(second, 'governance_job_runs_total', { result: 'success' });
      const firstLost = await jobCounter(first, 'governance_job_claims_lost_total');
      for (const name of once) {
        expect([name, firstRuns.get(name), firstLost.get(name)]).toEqual([name, 1, 0]);
        expect([name, secondRuns.get(name)]).toEqual([name, 0]);
      }
      // The parallel job claims nothing, and waits an interval before its first pass in each process.
      expect(rows.map((r) => r.name)).not.toContain('outbox');
      expect((await jobCounter(second, 'governance_job_claims_lost_total')).get('outbox')).toBe(0);
    });

    it('runNow runs at once where the period is held by the other process, without claiming it', async () => {
      const before = await periods(first.db);
      await second.service(JobScheduler).runNow('events-purge');
      await second.service(JobScheduler).runNow('alerts');
      const runs = await jobCounter(second, 'governance_job_runs_total', { result: 'success' });
      expect([runs.get('events-purge'), runs.get('alerts')]).toEqual([1, 1]);
      expect(await periods(first.db)).toEqual(before);
    });
  });
});
