import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  Counter,
  type CounterConfiguration,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  Registry,
} from 'prom-client';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

/** Every metric the service defines begins with this (the runtime's own are `process_*` and `nodejs_*`). */
export const METRIC_PREFIX = 'governance_';

/** Seconds, from a millisecond to a minute: request, batch, policy and job durations. */
export const DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

type AnyMetric = Counter<string> | Gauge<string> | Histogram<string>;

/**
 * The process's metrics, in the Prometheus text format (prom-client). One registry per application instance, not
 * prom-client's global one, so that two instances in one process (tests, a replica beside the API) do not mix.
 *
 * A module asks for its metrics where it is constructed: `metrics.counter({ name, help, labelNames })` returns the
 * metric of that name, made on first use. Label values must come from closed sets (a route's template, an outcome, a
 * topic, a job's name), never from ids, paths or organizations: every label value is a time series kept forever.
 * Collecting is on by default and costs a label lookup and an addition; exposing `/metrics` is the operator's choice
 * (METRICS_PORT, METRICS_TOKEN). METRICS=off (`enabled` false) makes every metric a stand-in that does nothing, and
 * tells the HTTP and runtime collectors not to install their hooks: what `npm run bench:observability` compares.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly enabled: boolean;

  constructor(@Optional() @Inject(APP_CONFIG) config?: Pick<AppConfig, 'metrics'>) {
    this.enabled = config?.metrics.enabled ?? true;
  }

  counter<L extends string = never>(config: CounterConfiguration<L>): Counter<L> {
    if (!this.enabled) return DISABLED as unknown as Counter<L>;
    return this.metric(config.name, Counter, () => new Counter({ ...config, registers: [this.registry] }));
  }

  gauge<L extends string = never>(config: GaugeConfiguration<L>): Gauge<L> {
    // A disabled gauge's `collect` is never called: nothing scrapes a disabled registry.
    if (!this.enabled) return DISABLED as unknown as Gauge<L>;
    return this.metric(config.name, Gauge, () => new Gauge({ ...config, registers: [this.registry] }));
  }

  histogram<L extends string = never>(config: HistogramConfiguration<L>): Histogram<L> {
    if (!this.enabled) return DISABLED as unknown as Histogram<L>;
    return this.metric(
      config.name,
      Histogram,
      () => new Histogram({ buckets: DURATION_BUCKETS, ...config, registers: [this.registry] }),
    );
  }

  /** The exposition: every metric of this process in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private metric<M extends AnyMetric>(
    name: string,
    kind: abstract new (...args: never[]) => M,
    make: () => M,
  ): M {
    if (!name.startsWith(METRIC_PREFIX))
      throw new Error(`A metric's name begins with ${METRIC_PREFIX}: ${name}`);
    const known = this.registry.getSingleMetric(name);
    if (known === undefined) return make();
    if (!(known instanceof kind)) throw new Error(`The metric ${name} is already defined as another kind`);
    return known as M;
  }
}

const nothing = (): void => undefined;
/**
 * What every metric is under METRICS=off: each method of a counter, gauge, histogram and their children does
 * nothing (a timer's end reports 0 s). One object, so that a disabled metric costs a call to an empty function.
 */
const DISABLED = {
  inc: nothing,
  dec: nothing,
  set: nothing,
  setToCurrentTime: nothing,
  observe: nothing,
  reset: nothing,
  remove: nothing,
  zero: nothing,
  startTimer: () => () => 0,
  labels: () => DISABLED,
  get: () => Promise.resolve({ name: '', help: '', type: 'counter', values: [], aggregator: 'sum' }),
};

/** How long a value read at scrape time is kept: a scrape every second costs a query every 5 s at most. */
export const SCRAPE_CACHE_MS = 5000;

export interface ScrapeCacheOptions {
  /** The time the cache ages by, in milliseconds (the application's Clock, so that tests can move it). */
  now: () => number;
  /** Told of a failed read once, until a read succeeds again. */
  onError: (err: unknown) => void;
  ttlMs?: number;
}

/**
 * For a gauge's `collect` when its value comes from a query: runs `read` (which sets the gauges) at most once per
 * `ttlMs`, however often Prometheus scrapes, and scrapes meanwhile share that read. Never rejects, so a scrape never
 * fails for it: a failed read leaves the gauges at their last values.
 */
export function scrapeCache(read: () => Promise<void>, options: ScrapeCacheOptions): () => Promise<void> {
  const ttlMs = options.ttlMs ?? SCRAPE_CACHE_MS;
  let last: { at: number; done: Promise<void> } | null = null;
  let failing = false;
  return () => {
    const now = options.now();
    // A clock set back reads again rather than trusting a read from the future.
    if (last && now >= last.at && now - last.at < ttlMs) return last.done;
    const done = Promise.resolve()
      .then(read)
      .then(
        () => {
          failing = false;
        },
        (err: unknown) => {
          if (!failing) options.onError(err);
          failing = true;
        },
      );
    last = { at: now, done };
    return done;
  };
}
