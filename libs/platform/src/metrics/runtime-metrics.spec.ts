import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../db/database.js';
import { SsrfRefusal } from '../net/ssrf-guard.js';
import type { RateLimitService } from '../security/rate-limit.js';
import { Metrics } from './metrics.js';
import { RuntimeMetrics } from './runtime-metrics.js';

/** A database handle that only keeps its query-error listeners, and a limiter without Redis. */
function runtime() {
  const listeners = new Set<() => void>();
  const database = {
    poolStats: () => ({ total: 3, idle: 2, waiting: 1 }),
    onQueryError: (listener: () => void) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  } as unknown as DatabaseHandle;
  const limiter = { sharedStoreReady: () => undefined } as unknown as RateLimitService;
  const metrics = new Metrics();
  return { metrics, listeners, runtime: new RuntimeMetrics(metrics, database, limiter) };
}

const valueOf = async (metrics: Metrics, name: string) =>
  (await metrics.registry.getSingleMetric(name)!.get()).values.map((v) => [v.labels, v.value]);

describe('RuntimeMetrics', () => {
  afterEach(() => vi.useRealTimers());

  it('listens while the application runs, and stops listening when it closes', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { metrics, listeners, runtime: subject } = runtime();
    subject.onApplicationBootstrap();
    expect(listeners.size).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    for (const listener of listeners) listener();
    new SsrfRefusal('127.0.0.1 is a loopback address');
    expect(await valueOf(metrics, 'governance_db_query_errors_total')).toEqual([[{}, 1]]);
    expect(await valueOf(metrics, 'governance_ssrf_refusals_total')).toEqual([[{}, 1]]);

    subject.onApplicationShutdown();
    expect(listeners.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    new SsrfRefusal('127.0.0.1 is a loopback address');
    expect(await valueOf(metrics, 'governance_ssrf_refusals_total')).toEqual([[{}, 1]]);
  });

  it('reads the pool by state when scraped, and has no Redis gauge without Redis', async () => {
    const { metrics } = runtime();
    expect(await valueOf(metrics, 'governance_db_pool_connections')).toEqual([
      [{ state: 'total' }, 3],
      [{ state: 'idle' }, 2],
      [{ state: 'waiting' }, 1],
    ]);
    expect(metrics.registry.getSingleMetric('governance_redis_up')).toBeUndefined();
  });

  it('registers the runtime default metrics in each registry without collecting them twice', () => {
    const first = runtime().metrics.registry;
    const second = runtime().metrics.registry;
    expect(first.getSingleMetric('process_cpu_user_seconds_total')).toBeDefined();
    expect(first.getSingleMetric('nodejs_gc_duration_seconds')).toBe(
      second.getSingleMetric('nodejs_gc_duration_seconds'),
    );
  });
});
