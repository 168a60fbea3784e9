import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

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

  constructor(@Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'workers'>) {}

  register(definition: JobDefinition): void {
    if (this.jobs.has(definition.name))
      throw new Error(`A job named ${definition.name} is already registered`);
    if (!(definition.intervalMs > 0)) throw new Error(`Job ${definition.name} needs a positive interval`);
    const job: Job = { ...definition, timer: null, running: null };
    this.jobs.set(definition.name, job);
    if (this.started) this.schedule(job);
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
    for (const job of this.jobs.values()) this.schedule(job);
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
        () => undefined,
        (err: unknown) => {
          this.logger.warn({ err, job: job.name }, 'Job failed; it runs again at its next interval');
        },
      )
      .finally(() => {
        job.running = null;
        this.logger.debug({ job: job.name, ms: Math.round(performance.now() - started) }, 'Job ran');
      });
    return job.running;
  }
}
