import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import type { Counter, Histogram } from 'prom-client';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';

export interface JobDefinition {
  /** Unique; names the job in logs. */
  name: string;
  /** Pause between the end of one run and the start of the next. */
  intervalMs: number;
  run: () => Promise<unknown>;
}

interface Job extends JobDefinition {
  timer: NodeJS.Timeout | null;
  running: Promise<void> | null;
  /** The job's metric children, resolved once at registration. */
  succeeded: Counter.Internal;
  failed: Counter.Internal;
  duration: Histogram.Internal<'job_name'>;
  claimsLost: Counter.Internal;
}

/**
 * The one place periodic work runs. Modules register their jobs while they initialise; the jobs start when the
 * application has booted, and only where background work runs (WORKERS=on, the default: the API process, and any
 * worker process). A job never overlaps itself: the next run is scheduled when the previous one ends, and `runNow`
 * joins a run in progress. A failing run is logged and retried at the next interval. At shutdown no run starts any
 * more and the runs in progress are awaited. Jobs must be safe to run on several replicas at once (claim their work
 * with `FOR UPDATE SKIP LOCKED`, or be idempotent).
 */
@Injectable()
export class JobScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('JobScheduler');
  private readonly jobs = new Map<string, Job>();
  private started = false;
  private stopped = false;
  private readonly runs: Counter<'job_name' | 'result'>;
  private readonly durations: Histogram<'job_name'>;
  private readonly lostClaims: Counter<'job_name'>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'workers'>,
    // Optional for schedulers made by hand (unit specs): they then count into a registry of their own.
    @Optional() metrics: Metrics = new Metrics(),
  ) {
    // `job_name`, not `job`: Prometheus gives `job` to the scrape job, and would rename ours `exported_job`.
    this.runs = metrics.counter({
      name: 'governance_job_runs_total',
      help: 'Scheduler job runs, by job and result',
      labelNames: ['job_name', 'result'],
    });
    this.durations = metrics.histogram({
      name: 'governance_job_duration_seconds',
      help: 'Duration of one scheduler job run, by job',
      labelNames: ['job_name'],
    });
    this.lostClaims = metrics.counter({
      name: 'governance_job_claims_lost_total',
      help: 'Work a job found already claimed by another replica (a lease taken, a claim lost), by job',
      labelNames: ['job_name'],
    });
  }

  register(definition: JobDefinition): void {
    if (this.jobs.has(definition.name))
      throw new Error(`A job named ${definition.name} is already registered`);
    if (!(definition.intervalMs > 0)) throw new Error(`Job ${definition.name} needs a positive interval`);
    // Job names are a closed set (registered in code), so they are fit to be label values.
    const job: Job = {
      ...definition,
      timer: null,
      running: null,
      succeeded: this.runs.labels(definition.name, 'success'),
      failed: this.runs.labels(definition.name, 'failure'),
      duration: this.durations.labels(definition.name),
      claimsLost: this.lostClaims.labels(definition.name),
    };
    this.jobs.set(definition.name, job);
    if (this.started) this.start(job);
  }

  /** Names of the registered jobs (diagnostics). */
  get names(): string[] {
    return [...this.jobs.keys()];
  }

  /** Whether registered jobs run in this process (WORKERS=on, and not shut down). */
  get running(): boolean {
    return this.started && !this.stopped;
  }

  onApplicationBootstrap(): void {
    if (!this.config.workers || this.stopped) return;
    this.started = true;
    for (const job of this.jobs.values()) this.start(job);
  }

  /**
   * Counts work the job had claimed but found taken by another replica first: a row it picked whose lease another
   * took, a claim superseded by a later one. Jobs that claim with `FOR UPDATE SKIP LOCKED` or leases call it where
   * they can tell (a row SKIP LOCKED passes over is not seen, so it cannot be counted).
   */
  claimsLost(name: string, count = 1): void {
    if (count > 0) this.jobs.get(name)?.claimsLost.inc(count);
  }

  /** Runs the job now (for operators and tests), or waits for the run in progress. */
  runNow(name: string): Promise<void> {
    const job = this.jobs.get(name);
    if (!job) throw new Error(`No job named ${name}`);
    return this.execute(job);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const job of this.jobs.values()) {
      if (job.timer) clearTimeout(job.timer);
      job.timer = null;
    }
    await Promise.all([...this.jobs.values()].map((job) => job.running));
  }

  /**
   * Schedules a job where jobs run, with its counters present at 0 from then on: a first failure is then an
   * increase Prometheus sees, and a process that runs no jobs (WORKERS=off) shows no job series at all.
   */
  private start(job: Job): void {
    job.succeeded.inc(0);
    job.failed.inc(0);
    job.claimsLost.inc(0);
    this.schedule(job);
  }

  private schedule(job: Job): void {
    if (this.stopped || job.timer) return;
    job.timer = setTimeout(() => {
      job.timer = null;
      void this.execute(job).then(() => this.schedule(job));
    }, job.intervalMs);
    job.timer.unref();
  }

  private execute(job: Job): Promise<void> {
    if (job.running) return job.running;
    const started = performance.now();
    job.running = job
      .run()
      .then(
        () => job.succeeded.inc(),
        (err: unknown) => {
          job.failed.inc();
          this.logger.warn({ err, job: job.name }, 'Job failed; it runs again at its next interval');
        },
      )
      .finally(() => {
        job.running = null;
        const ms = performance.now() - started;
        job.duration.observe(ms / 1000);
        this.logger.debug({ job: job.name, ms: Math.round(ms) }, 'Job ran');
      });
    return job.running;
  }
}
