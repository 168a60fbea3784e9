import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Metrics } from '../metrics/metrics.js';
import { JobScheduler } from './job-scheduler.js';

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
    scheduler.register({ name: 'a', intervalMs: 1000, run: a });
    scheduler.register({ name: 'b', intervalMs: 3000, run: b });
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
    scheduler.register({ name: 'a', intervalMs: 1000, run });
    scheduler.onApplicationBootstrap();
    expect(scheduler.running).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(run).not.toHaveBeenCalled();
    await scheduler.runNow('a');
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('never overlaps a job with itself: the next run is timed from the end of the last, runNow joins it', async () => {
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
    scheduler.register({ name: 'slow', intervalMs: 1000, run });
    scheduler.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(1000);
    expect(run).toHaveBeenCalledTimes(1);
    const joined = scheduler.runNow('slow');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(run).toHaveBeenCalledTimes(1);
    gate.resolve();
    await joined;
    expect(maxActive).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(run).toHaveBeenCalledTimes(2);
    await scheduler.beforeApplicationShutdown();
  });

  it('keeps the schedule after a failing run', async () => {
    const scheduler = new JobScheduler({ workers: true });
    const run = vi.fn(async () => undefined).mockRejectedValueOnce(new Error('database unavailable'));
    scheduler.register({ name: 'flaky', intervalMs: 1000, run });
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
    scheduler.register({ name: 'a', intervalMs: 1000, run });
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
    scheduler.register({ name: 'a', intervalMs: 1000, run: async () => undefined });
    scheduler.onApplicationBootstrap();
    const timer = setTimeoutSpy.mock.results.at(-1)!.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    await scheduler.beforeApplicationShutdown();
  });

  it('counts runs by job and result, observes their duration, and counts the claims a job lost', async () => {
    const metrics = new Metrics();
    const scheduler = new JobScheduler({ workers: false }, metrics);
    const run = vi.fn(async () => undefined).mockRejectedValueOnce(new Error('database unavailable'));
    scheduler.register({ name: 'flaky', intervalMs: 1000, run });
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
    idle.register({ name: 'purge', intervalMs: 60_000, run: async () => undefined });
    idle.onApplicationBootstrap();
    expect(await samples(off)).toEqual([]);

    const on = new Metrics();
    const scheduler = new JobScheduler({ workers: true }, on);
    scheduler.register({ name: 'purge', intervalMs: 60_000, run: async () => undefined });
    scheduler.onApplicationBootstrap();
    // Registered after the start: scheduled, and at 0, at once.
    scheduler.register({ name: 'late', intervalMs: 60_000, run: async () => undefined });
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
    scheduler.register({ name: 'a', intervalMs: 1000, run: async () => undefined });
    expect(() => scheduler.register({ name: 'a', intervalMs: 1000, run: async () => undefined })).toThrow(
      /already registered/,
    );
  });
});
