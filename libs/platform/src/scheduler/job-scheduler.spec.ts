import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Metrics } from '../metrics/metrics.js';
import { earlyClaimMs, JobScheduler } from './job-scheduler.js';
import type { JobPeriods } from './scheduled-jobs.repository.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('JobScheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs each registered job every interval once the application has booted', async () => {
    const scheduler = new JobScheduler({ workers: true });
    const a = vi.fn(async () => undefined);
    const b = vi.fn(async () => undefined);
    scheduler.register({ name: 'a', intervalMs: 1000, run: a, mode: 'once-per-period' });
    scheduler.register({ name: 'b', intervalMs: 3000, run: b, mode: 'parallel' });
    await vi.advanceTimersByTimeAsync(5000);
    expect(a).not.toHaveBeenCalled(); // not before bootstrap
    scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(3000);
    expect(a).toHaveBeenCalledTimes(3);
    expect(b).toHaveBeenCalledTimes(1);
    await scheduler.beforeApplicationShutdown();
  });

  it('runs nothing with WORKERS=off, though runNow still works for operators and tests', async () => {
    const scheduler = new JobScheduler({ workers: false });
    const run = vi.fn(async () => undefined);
    scheduler.register({ name: 'a', intervalMs: 1000, mode: 'once-per-period', run });
    scheduler.onApplicationBootstrap();
    expect(scheduler.running).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(run).not.toHaveBeenCalled();
    await scheduler.runNow('a');
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('never overlaps a job with itself: the next run is timed from the end of the last, runNow waits for it', async () => {
    const scheduler = new JobScheduler({ workers: true });
    const gate = deferred();
    let active = 0;
    let maxActive = 0;
    const run = vi.fn(async () => {
      active += 1;
      maxActive = Math.max(maxActive, active);
      await gate.promise;
      active -= 1;
    });
    scheduler.register({ name: 'slow', intervalMs: 1000, mode: 'once-per-period', run });
    scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(1000);
    expect(run).toHaveBeenCalledTimes(1);
    // runNow runs after the run in progress: a run that starts after the call, so it sees what was written before.
    const forced = scheduler.runNow('slow');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(run).toHaveBeenCalledTimes(1);
    gate.resolve();
    await forced;
    expect(run).toHaveBeenCalledTimes(2);
    expect(maxActive).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(run).toHaveBeenCalledTimes(3);
    await scheduler.beforeApplicationShutdown();
  });

  it('keeps the schedule after a failing run', async () => {
    const scheduler = new JobScheduler({ workers: true });
    const run = vi.fn(async () => undefined).mockRejectedValueOnce(new Error('database unavailable'));
    scheduler.register({ name: 'flaky', intervalMs: 1000, mode: 'once-per-period', run });
    scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(2000);
    expect(run).toHaveBeenCalledTimes(2);
    await scheduler.beforeApplicationShutdown();
  });

  it('at shutdown starts no run any more and awaits the one in progress', async () => {
    const scheduler = new JobScheduler({ workers: true });
    const gate = deferred();
    let finished = false;
    const run = vi.fn(async () => {
      await gate.promise;
      finished = true;
    });
    scheduler.register({ name: 'a', intervalMs: 1000, mode: 'once-per-period', run });
    scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(1000);
    let stopped = false;
    const stopping = scheduler.beforeApplicationShutdown().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(finished).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(run).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not keep the process alive for its timers', async () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const scheduler = new JobScheduler({ workers: true });
    scheduler.register({ name: 'a', intervalMs: 1000, mode: 'once-per-period', run: async () => undefined });
    scheduler.onApplicationBootstrap();
    const timer = setTimeoutSpy.mock.results.at(-1)!.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    await scheduler.beforeApplicationShutdown();
  });

  it('counts runs by job and result, observes their duration, and counts the claims a job lost', async () => {
    const metrics = new Metrics();
    const scheduler = new JobScheduler({ workers: false }, metrics);
    const run = vi.fn(async () => undefined).mockRejectedValueOnce(new Error('database unavailable'));
    scheduler.register({ name: 'flaky', intervalMs: 1000, mode: 'once-per-period', run });
    await scheduler.runNow('flaky');
    await scheduler.runNow('flaky');
    await scheduler.runNow('flaky');
    scheduler.claimsLost('flaky', 2);
    scheduler.claimsLost('flaky', 0);
    scheduler.claimsLost('unknown');
    /** A sample of a metric (a histogram's by its sample name: `<name>_count`). */
    const value = async (name: string, labels: Record<string, string>, sample = name) =>
      (await metrics.registry.getSingleMetric(name)!.get()).values.find(
        (v) =>
          ((v as { metricName?: string }).metricName ?? name) === sample &&
          Object.entries(labels).every(([k, l]) => v.labels[k] === l),
      )?.value;
    expect(await value('governance_job_runs_total', { job_name: 'flaky', result: 'success' })).toBe(2);
    expect(await value('governance_job_runs_total', { job_name: 'flaky', result: 'failure' })).toBe(1);
    const duration = 'governance_job_duration_seconds';
    expect(await value(duration, { job_name: 'flaky' }, `${duration}_count`)).toBe(3);
    expect(await value('governance_job_claims_lost_total', { job_name: 'flaky' })).toBe(2);
    expect(await value('governance_job_claims_lost_total', { job_name: 'unknown' })).toBeUndefined();
  });

  it("shows a job's counters at 0 once it is scheduled, and none where jobs do not run (WORKERS=off)", async () => {
    const samples = async (metrics: Metrics) =>
      (await metrics.registry.getSingleMetric('governance_job_runs_total')!.get()).values.map((v) => ({
        ...v.labels,
        value: v.value,
      }));
    const off = new Metrics();
    const idle = new JobScheduler({ workers: false }, off);
    idle.register({ name: 'purge', intervalMs: 60_000, mode: 'once-per-period', run: async () => undefined });
    idle.onApplicationBootstrap();
    expect(await samples(off)).toEqual([]);

    const on = new Metrics();
    const scheduler = new JobScheduler({ workers: true }, on);
    scheduler.register({
      name: 'purge',
      intervalMs: 60_000,
      mode: 'once-per-period',
      run: async () => undefined,
    });
    scheduler.onApplicationBootstrap();
    // Registered after the start: scheduled, and at 0, at once.
    scheduler.register({
      name: 'late',
      intervalMs: 60_000,
      mode: 'once-per-period',
      run: async () => undefined,
    });
    expect(await samples(on)).toEqual([
      { job_name: 'purge', result: 'success', value: 0 },
      { job_name: 'purge', result: 'failure', value: 0 },
      { job_name: 'late', result: 'success', value: 0 },
      { job_name: 'late', result: 'failure', value: 0 },
    ]);
    await scheduler.beforeApplicationShutdown();
    await idle.beforeApplicationShutdown();
  });

  it('refuses two jobs of one name', () => {
    const scheduler = new JobScheduler({ workers: true });
    scheduler.register({ name: 'a', intervalMs: 1000, mode: 'once-per-period', run: async () => undefined });
    expect(() =>
      scheduler.register({ name: 'a', intervalMs: 1000, mode: 'parallel', run: async () => undefined }),
    ).toThrow(/already registered/);
  });
});

/**
 * The periods' store as PostgreSQL keeps it (scheduled_jobs), on the faked clock: one claim at a time, a period
 * over up to `earlyMs` before its end. test/scheduled-jobs.e2e-spec.ts runs the real one.
 */
class MemoryPeriods implements JobPeriods {
  readonly periods = new Map<string, { nextRunAt: number; lastRunBy: string }>();
  /** Set to make claims fail (the database unreachable). */
  failing = false;

  async claim(name: string, periodMs: number, earlyMs: number, by: string): Promise<boolean> {
    if (this.failing) throw new Error('connection refused');
    const now = Date.now();
    const period = this.periods.get(name);
    if (period && period.nextRunAt > now + earlyMs) return false;
    this.periods.set(name, { nextRunAt: now + periodMs, lastRunBy: by });
    return true;
  }
}

describe('JobScheduler with the periods of once-per-period jobs', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A process: its scheduler on the shared store, with the job registered. */
  function processOn(periods: JobPeriods, mode: 'once-per-period' | 'parallel' = 'once-per-period') {
    const metrics = new Metrics();
    const scheduler = new JobScheduler({ workers: true }, metrics, periods);
    const run = vi.fn(async () => undefined);
    scheduler.register({ name: 'purge', intervalMs: 1000, mode, run });
    const count = async (name: string, labels: Record<string, string> = {}) =>
      (await metrics.registry.getSingleMetric(name)!.get()).values
        .filter((v) => Object.entries({ job_name: 'purge', ...labels }).every(([k, l]) => v.labels[k] === l))
        .reduce((sum, v) => sum + v.value, 0);
    return {
      scheduler,
      run,
      successes: () => count('governance_job_runs_total', { result: 'success' }),
      failures: () => count('governance_job_runs_total', { result: 'failure' }),
      lost: () => count('governance_job_claims_lost_total'),
    };
  }

  it('runs the job once per period across two processes: at the first start, then each interval', async () => {
    const periods = new MemoryPeriods();
    const a = processOn(periods);
    const b = processOn(periods);
    a.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    // On start, at once: the job never ran, so the first process claims its period.
    expect(a.run).toHaveBeenCalledTimes(1);
    expect(periods.periods.get('purge')?.lastRunBy).toBe(a.scheduler.instance);
    await vi.advanceTimersByTimeAsync(300);
    b.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    // The other one starts within the period: it skips its tick, and counts the period it lost.
    expect(b.run).not.toHaveBeenCalled();
    expect(await b.lost()).toBe(1);

    // 10 more periods (to 10.3 s): each is run by one process only; the other's tick in it is a lost claim.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(a.run.mock.calls.length + b.run.mock.calls.length).toBe(11);
    expect((await a.successes()) + (await b.successes())).toBe(11);
    expect((await a.lost()) + (await b.lost())).toBe(11);
    expect((await a.failures()) + (await b.failures())).toBe(0);

    // The first process stops: the other claims the next period once it is over, and runs every one after it.
    await a.scheduler.beforeApplicationShutdown();
    const before = b.run.mock.calls.length;
    await vi.advanceTimersByTimeAsync(5000);
    expect(b.run.mock.calls.length - before).toBeGreaterThanOrEqual(4);
    expect(b.run.mock.calls.length - before).toBeLessThanOrEqual(5);
    expect(periods.periods.get('purge')?.lastRunBy).toBe(b.scheduler.instance);
    await b.scheduler.beforeApplicationShutdown();
  });

  it('a process restarted within a period runs nothing again, and one started after a period runs at once', async () => {
    const periods = new MemoryPeriods();
    const first = processOn(periods);
    first.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    await first.scheduler.beforeApplicationShutdown();
    await vi.advanceTimersByTimeAsync(500);
    const restarted = processOn(periods);
    restarted.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    expect(restarted.run).not.toHaveBeenCalled();
    // Its next tick, an interval later, finds the period over.
    await vi.advanceTimersByTimeAsync(1000);
    expect(restarted.run).toHaveBeenCalledTimes(1);
    await restarted.scheduler.beforeApplicationShutdown();

    await vi.advanceTimersByTimeAsync(60_000);
    const late = processOn(periods);
    late.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    expect(late.run).toHaveBeenCalledTimes(1);
    await late.scheduler.beforeApplicationShutdown();
  });

  it('claims a period a little before its end, so that a timer firing early does not skip it', async () => {
    expect(earlyClaimMs(1000)).toBe(50);
    expect(earlyClaimMs(60_000)).toBe(1000);
    expect(earlyClaimMs(3_600_000)).toBe(1000);
    const periods = new MemoryPeriods();
    periods.periods.set('purge', { nextRunAt: Date.now() + 40, lastRunBy: 'other' });
    const p = processOn(periods);
    p.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    expect(p.run).toHaveBeenCalledTimes(1);
    await p.scheduler.beforeApplicationShutdown();
  });

  it('runNow runs at once, without claiming the period, though another process holds it', async () => {
    const periods = new MemoryPeriods();
    const a = processOn(periods);
    const b = processOn(periods);
    a.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    const held = periods.periods.get('purge');
    await b.scheduler.runNow('purge');
    expect(b.run).toHaveBeenCalledTimes(1);
    expect(periods.periods.get('purge')).toEqual(held);
    // Also with WORKERS=off, where nothing is scheduled or claimed.
    const off = new JobScheduler({ workers: false }, new Metrics(), periods);
    const run = vi.fn(async () => undefined);
    off.register({ name: 'purge', intervalMs: 1000, mode: 'once-per-period', run });
    off.onApplicationBootstrap();
    await off.runNow('purge');
    expect(run).toHaveBeenCalledTimes(1);
    expect(periods.periods.get('purge')).toEqual(held);
    await a.scheduler.beforeApplicationShutdown();
  });

  it('runNow during a tick that loses its claim still runs the job', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const periods: JobPeriods = {
      claim: async () => {
        await gate;
        return false;
      },
    };
    const p = processOn(periods);
    p.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    const forced = p.scheduler.runNow('purge');
    release();
    await forced;
    expect(p.run).toHaveBeenCalledTimes(1);
    expect(await p.lost()).toBe(1);
    await p.scheduler.beforeApplicationShutdown();
  });

  it('counts a claim that failed as a failed run, and claims again at the next interval', async () => {
    const periods = new MemoryPeriods();
    periods.failing = true;
    const p = processOn(periods);
    p.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    expect(p.run).not.toHaveBeenCalled();
    expect(await p.failures()).toBe(1);
    periods.failing = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(p.run).toHaveBeenCalledTimes(1);
    expect(await p.successes()).toBe(1);
    await p.scheduler.beforeApplicationShutdown();
  });

  it('runs a parallel job in every process, never claimed, first one interval after the start', async () => {
    const periods = new MemoryPeriods();
    const a = processOn(periods, 'parallel');
    const b = processOn(periods, 'parallel');
    a.scheduler.onApplicationBootstrap();
    b.scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(0);
    expect(a.run).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(3000);
    expect(a.run).toHaveBeenCalledTimes(3);
    expect(b.run).toHaveBeenCalledTimes(3);
    expect(periods.periods.size).toBe(0);
    expect((await a.lost()) + (await b.lost())).toBe(0);
    await a.scheduler.beforeApplicationShutdown();
    await b.scheduler.beforeApplicationShutdown();
  });
});
