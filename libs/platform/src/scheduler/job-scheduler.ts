import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Counter, Histogram } from 'prom-client';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { type JobPeriods, ScheduledJobsRepository } from './scheduled-jobs.repository.js';

/**
 * How a job runs where several processes run jobs (WORKERS=on):
 * - `once-per-period`: once per interval across all of them. Before a run a process claims the job's period in
 *   PostgreSQL (`scheduled_jobs`, on the database's clock); the process whose claim succeeds runs it, the others
 *   skip that tick (counted in `governance_job_claims_lost_total`) and try again at their next one.
 * - `parallel`: every process runs it on its own timer, for work that is claimed item by item (leases, `FOR UPDATE
 *   SKIP LOCKED`) so that more processes share more of it.
 */
export type JobMode = 'once-per-period' | 'parallel';

export interface JobDefinition {
  /** Unique; names the job in logs, metrics and `scheduled_jobs`. */
  name: string;
  /** Pause between the end of one run and the start of the next; with `once-per-period`, also the period. */
  intervalMs: number;
  mode: JobMode;
  run: () => Promise<unknown>;
}

/** A period counts as over up to this long before its end: a timer firing a little early still finds it over. */
const EARLY_MAX_MS = 1000;

/** How long before its end a job's period may be claimed: a twentieth of the interval, at most a second. */
export function earlyClaimMs(intervalMs: number): number {
  return Math.min(EARLY_MAX_MS, Math.floor(intervalMs / 20));
}

interface Job extends JobDefinition {
  timer: NodeJS.Timeout | null;
  /** The tick (a period's claim, then maybe a run) or the run of `runNow` in progress; never rejects. */
  busy: Promise<void> | null;
  /** The job's metric children, resolved once at registration. */
  succeeded: Counter.Internal;
  failed: Counter.Internal;
  duration: Histogram.Internal<'job_name'>;
  claimsLost: Counter.Internal;
}

/**
 * The one place periodic work runs. Modules register their jobs while they initialise; the jobs start when the
 * application has booted, and only where background work runs (WORKERS=on, the default: the API process, and any
 * worker process). A `once-per-period` job runs once per interval across all those processes (see JobMode): each
 * process ticks at once on start, then every interval, and runs the job only when it claimed the period; a restart
 * within a period therefore runs nothing again, and a period that ended while no process ran is run at the next
 * start. A `parallel` job runs in every process, first one interval after the start. A job never overlaps itself
 * in a process: the next tick is scheduled when the previous one ends, and `runNow` waits for the one in progress.
 * A failing run (or claim) is logged and retried at the next interval. At shutdown no run starts any more and the
 * runs in progress are awaited. A run that outlasts its interval may meet the next period's run in another process,
 * so jobs must still be safe to run on several replicas at once (claim their work with `FOR UPDATE SKIP LOCKED`, or
 * be idempotent). A scheduler made by hand without the periods' store (unit specs) runs every job as a lone process
 * would: no claim, the first run one interval after the start.
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
  /** This process (and scheduler) in `scheduled_jobs.last_run_by`: host, pid and a random instance. */
  readonly instance = `${hostname().slice(0, 160)}:${process.pid}:${randomBytes(4).toString('hex')}`;

  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'workers'>,
    // Optional for schedulers made by hand (unit specs): they then count into a registry of their own.
    @Optional() metrics: Metrics = new Metrics(),
    // Optional for schedulers made by hand: without it, no period is claimed (a lone process).
    @Optional() @Inject(ScheduledJobsRepository) private readonly periods?: JobPeriods,
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
      help:
        'Work a job found already claimed by another replica (a period another process runs, a lease taken, ' +
        'a claim lost), by job',
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
      busy: null,
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
   * they can tell (a row SKIP LOCKED passes over is not seen, so it cannot be counted). The scheduler counts here
   * the periods of `once-per-period` jobs that another process had claimed.
   */
  claimsLost(name: string, count = 1): void {
    if (count > 0) this.jobs.get(name)?.claimsLost.inc(count);
  }

  /**
   * Runs the job now (for operators and tests), without claiming its period, and even with WORKERS=off: once the
   * tick or run in progress, if any, has ended, so that the run sees whatever was committed before the call.
   */
  runNow(name: string): Promise<void> {
    const job = this.jobs.get(name);
    if (!job) throw new Error(`No job named ${name}`);
    return this.runAfterBusy(job);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const job of this.jobs.values()) {
      if (job.timer) clearTimeout(job.timer);
      job.timer = null;
    }
    await Promise.all([...this.jobs.values()].map((job) => job.busy));
  }

  /**
   * Schedules a job where jobs run, with its counters present at 0 from then on: a first failure is then an
   * increase Prometheus sees, and a process that runs no jobs (WORKERS=off) shows no job series at all.
   */
  private start(job: Job): void {
    job.succeeded.inc(0);
    job.failed.inc(0);
    job.claimsLost.inc(0);
    // Whether a period is over only the periods' store knows: with it, a once-per-period job ticks at once.
    this.schedule(job, this.claims(job) ? 0 : job.intervalMs);
  }

  private claims(job: Job): boolean {
    return job.mode === 'once-per-period' && this.periods !== undefined;
  }

  private schedule(job: Job, delayMs = job.intervalMs): void {
    if (this.stopped || job.timer) return;
    job.timer = setTimeout(() => {
      job.timer = null;
      void this.tick(job).then(() => this.schedule(job));
    }, delayMs);
    job.timer.unref();
  }

  /** A timer's tick: the job runs if its period is claimed (once-per-period) or at once (parallel). */
  private tick(job: Job): Promise<void> {
    // A run of runNow in progress stands for this tick.
    if (job.busy) return job.busy;
    return this.occupy(job, async () => {
      if (this.stopped || !(await this.claimPeriod(job))) return;
      await this.execute(job);
    });
  }

  private async runAfterBusy(job: Job): Promise<void> {
    while (job.busy) await job.busy;
    await this.occupy(job, () => this.execute(job));
  }

  /** Marks the job busy until `work` has ended (`work` never rejects). */
  private occupy(job: Job, work: () => Promise<void>): Promise<void> {
    const busy: Promise<void> = work().finally(() => {
      if (job.busy === busy) job.busy = null;
    });
    job.busy = busy;
    return busy;
  }

  /** Whether this process may run the job's tick: its period claimed here, or no period to claim. */
  private async claimPeriod(job: Job): Promise<boolean> {
    if (!this.claims(job)) return true;
    try {
      const claimed = await this.periods!.claim(
        job.name,
        job.intervalMs,
        earlyClaimMs(job.intervalMs),
        this.instance,
      );
      if (!claimed) {
        job.claimsLost.inc();
        this.logger.debug({ job: job.name }, 'Period already claimed by another process; tick skipped');
      }
      return claimed;
    } catch (err) {
      job.failed.inc();
      this.logger.warn(
        { err, job: job.name },
        'The job period could not be claimed; tried again at its next interval',
      );
      return false;
    }
  }

  /** One run, counted and timed (never rejects). */
  private execute(job: Job): Promise<void> {
    const started = performance.now();
    return job
      .run()
      .then(
        () => job.succeeded.inc(),
        (err: unknown) => {
          job.failed.inc();
          this.logger.warn({ err, job: job.name }, 'Job failed; it runs again at its next interval');
        },
      )
      .finally(() => {
        const ms = performance.now() - started;
        job.duration.observe(ms / 1000);
        this.logger.debug({ job: job.name, ms: Math.round(ms) }, 'Job ran');
      });
  }
}
