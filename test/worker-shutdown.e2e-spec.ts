import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildService } from './support/built-service.js';
import { startWorker, workerEntry } from './support/built-worker.js';
import { scratchDatabase } from './support/scratch-database.js';

const onPostgres = inject('databaseMode') === 'postgres';
/** Short, so that the held-up shutdown is cut off quickly. */
const SHORT_TIMEOUT_MS = 1_000;
/** The default: a prompt exit is not this timer. */
const DEFAULT_TIMEOUT_MS = 10_000;

/** The worker's backends on `database` waiting for a lock, as `holder` (another session on it) sees them. */
async function waitingOnLocks(holder: pg.Client): Promise<number> {
  const { rows } = await holder.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`,
  );
  return rows[0]!.n;
}

/**
 * The worker process (apps/worker, `npm run start:worker`) on SIGTERM (docs/operators.md, "Readiness, liveness and
 * the drain": "the worker has no drain … and exits past SHUTDOWN_TIMEOUT_MS"): Nest's shutdown hooks await the jobs in
 * progress and close the pool, and then the process ends on the signal; a timer started at the signal exits 1 once
 * SHUTDOWN_TIMEOUT_MS has passed if they have not ended. The hang is real: another session holds `scheduled_jobs`
 * against writes, so each once-per-period job's first tick (the claim of its period, at start-up) waits on the lock,
 * and the scheduler's `beforeApplicationShutdown` waits for those ticks. PostgreSQL only: on the embedded database no
 * other session can hold a lock against the worker.
 */
describe.runIf(onPostgres)('worker shutdown on SIGTERM', () => {
  let build: ReturnType<typeof buildService>;
  let database: { name: string; url: string };
  beforeAll(async () => {
    build = buildService();
    database = await scratchDatabase();
  });
  afterAll(() => build?.remove());

  it('ends on the signal, well before SHUTDOWN_TIMEOUT_MS, when nothing holds its shutdown up', async () => {
    const worker = await startWorker(workerEntry(build.entry), {
      DATABASE_URL: database.url,
      WORKERS: 'on',
      SHUTDOWN_TIMEOUT_MS: String(DEFAULT_TIMEOUT_MS),
    });
    try {
      const sentAt = performance.now();
      worker.child.kill('SIGTERM');
      const exit = await worker.exited;
      // Nest re-raises the signal once its hooks have run; the worker's exit timer would have exited 1.
      expect(exit).toMatchObject({ code: null, signal: 'SIGTERM' });
      expect(exit.at - sentAt).toBeLessThan(3_000);
    } finally {
      await worker.kill();
    }
  });

  it('exits 1 once SHUTDOWN_TIMEOUT_MS has passed when a job in progress cannot finish', async () => {
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('begin');
    await holder.query('lock table scheduled_jobs in share mode');
    const worker = await startWorker(workerEntry(build.entry), {
      DATABASE_URL: database.url,
      WORKERS: 'on',
      SHUTDOWN_TIMEOUT_MS: String(SHORT_TIMEOUT_MS),
    });
    try {
      // The jobs' period claims are in flight and stuck: the shutdown's wait for them cannot end.
      await expect.poll(() => waitingOnLocks(holder), { timeout: 5_000, interval: 25 }).toBeGreaterThan(0);
      const sentAt = performance.now();
      worker.child.kill('SIGTERM');
      const exit = await worker.exited;
      const tookMs = exit.at - sentAt;
      expect(exit).toMatchObject({ code: 1, signal: null });
      // Not before the timeout (a timer may fire a millisecond early), and not long after it.
      expect(tookMs).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 5);
      expect(tookMs).toBeLessThan(SHORT_TIMEOUT_MS + 2_000);
      // The claims were still waiting when it exited: it was the timer, not the end of the shutdown.
      expect(await waitingOnLocks(holder)).toBeGreaterThan(0);
      // Nor a failed shutdown hook, which Nest also answers with exit code 1 (at once, logged at level error).
      expect(worker.logs.filter((line) => Number(line.level) >= 50)).toEqual([]);
    } finally {
      await worker.kill();
      // The orphaned claims would commit once the lock is released: end their backends first.
      await holder.query(
        `select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()`,
      );
      await holder.query('rollback');
      await holder.end();
    }
  });
});
