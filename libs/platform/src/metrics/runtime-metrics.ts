import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { collectDefaultMetrics, type Counter, type Histogram, Registry } from 'prom-client';
import { DATABASE, type DatabaseHandle } from '../db/database.js';
import { observeSsrfRefusals } from '../net/ssrf-guard.js';
import { RateLimitService } from '../security/rate-limit.js';
import { Metrics } from './metrics.js';

/** The event-loop monitor's sampling interval: its samples are this late at the least, so it is taken off. */
const EVENT_LOOP_RESOLUTION_MS = 20;
/** One histogram sample a second: the longest delay of the loop in that second. */
const EVENT_LOOP_SAMPLE_MS = 1000;

let processRegistry: Registry | undefined;

/**
 * prom-client's `process_*` and `nodejs_*` metrics, collected once per process and shared by every application's
 * registry. They describe the process, not an application, and prom-client cannot stop what it starts for them (a
 * GC observer and an event-loop monitor): collected per registry, each application started in a process (tests
 * start hundreds) would leave its own running.
 */
export function shareProcessMetrics(registry: Registry): void {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  for (const { name } of processRegistry.getMetricsAsArray()) {
    if (!registry.getSingleMetric(name)) registry.registerMetric(processRegistry.getSingleMetric(name)!);
  }
}

/**
 * What the process runs on: the runtime's default metrics, the event loop's delay, the database pool and its
 * failed queries, Redis, and the SSRF guard's refusals. Gauges are read at scrape time; the event-loop monitor and
 * the listeners start with the application and stop when it closes.
 */
@Injectable()
export class RuntimeMetrics implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly eventLoopDelay: Histogram;
  private readonly queryErrors: Counter;
  private readonly ssrfRefusals: Counter;
  private readonly stops: (() => void)[] = [];
  private readonly enabled: boolean;

  constructor(
    metrics: Metrics,
    @Inject(DATABASE) private readonly database: DatabaseHandle,
    limiter: RateLimitService,
  ) {
    this.enabled = metrics.enabled;
    if (metrics.enabled) shareProcessMetrics(metrics.registry);
    this.eventLoopDelay = metrics.histogram({
      name: 'governance_event_loop_delay_seconds',
      help: 'The event loop: its longest delay in each second (one sample a second).',
    });
    this.queryErrors = metrics.counter({
      name: 'governance_db_query_errors_total',
      help: 'Database queries that failed.',
    });
    this.ssrfRefusals = metrics.counter({
      name: 'governance_ssrf_refusals_total',
      help: "Outbound requests refused by the SSRF guard (a customer's URL resolving to a private address).",
    });
    metrics.gauge({
      name: 'governance_db_pool_connections',
      help: 'Database pool connections, by state (PGlite: its one in-process connection, total only).',
      labelNames: ['state'],
      collect() {
        const stats = database.poolStats?.() ?? { total: 1 };
        this.set({ state: 'total' }, stats.total);
        if (stats.idle !== undefined) this.set({ state: 'idle' }, stats.idle);
        if (stats.waiting !== undefined) this.set({ state: 'waiting' }, stats.waiting);
      },
    });
    // Absent without REDIS_URL: no series rather than a Redis reported down that was never meant to be there.
    if (limiter.sharedStoreReady() !== undefined) {
      metrics.gauge({
        name: 'governance_redis_up',
        help: '1 when the Redis connection (the shared rate-limit store) is ready, else 0.',
        collect() {
          this.set(limiter.sharedStoreReady() ? 1 : 0);
        },
      });
    }
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    const stopQueries = this.database.onQueryError?.(() => this.queryErrors.inc());
    if (stopQueries) this.stops.push(stopQueries);
    this.stops.push(observeSsrfRefusals(() => this.ssrfRefusals.inc()));
    this.stops.push(sampleEventLoop(this.eventLoopDelay));
  }

  onApplicationShutdown(): void {
    for (const stop of this.stops.splice(0)) stop();
  }
}

/** Starts the event-loop monitor and its sampling; returns what stops both. */
function sampleEventLoop(histogram: Histogram): () => void {
  const monitor: IntervalHistogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  monitor.enable();
  const timer = setInterval(() => {
    if (monitor.count > 0) {
      histogram.observe(Math.max(0, monitor.max / 1e6 - EVENT_LOOP_RESOLUTION_MS) / 1000);
    }
    monitor.reset();
  }, EVENT_LOOP_SAMPLE_MS).unref();
  return () => {
    clearInterval(timer);
    monitor.disable();
  };
}
