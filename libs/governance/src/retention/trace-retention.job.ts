import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, Clock, JobScheduler } from '#platform';
import { OrganizationsService } from '#identity';
import { TracePurgeService } from './trace-purge.service.js';

const DAY_MS = 86_400_000;
/** Organizations read per page. */
const PAGE = 100;

/**
 * Trace retention: for each organization with `traceRetentionDays`, purges the traces older than
 * that. A job of the JobScheduler every TRACE_RETENTION_INTERVAL_MS (an hour by default), once per interval across
 * the processes that run jobs. Safe all the same on several replicas (a run outlasting its interval, a manual one):
 * the purge's batches skip rows another replica is deleting.
 * See docs/compliance-officers.md, "Trace purge and retention"; test/trace-purge.e2e-spec.ts.
 */
@Injectable()
export class TraceRetentionJob implements OnModuleInit {
  private readonly logger = new Logger('TraceRetention');

  constructor(
    private readonly scheduler: JobScheduler,
    private readonly organizations: OrganizationsService,
    private readonly purges: TracePurgeService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'traceRetentionIntervalMs'>,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'trace-retention',
      intervalMs: this.config.traceRetentionIntervalMs,
      mode: 'once-per-period',
      run: () => this.run(),
    });
  }

  /** One pass over every organization with a retention; returns the traces purged. */
  async run(): Promise<number> {
    let purged = 0;
    let after = '';
    for (;;) {
      const page = await this.organizations.withRetention(after, PAGE);
      for (const org of page) {
        const before = new Date(this.clock.nowMs() - org.traceRetentionDays * DAY_MS);
        try {
          purged += await this.purges.purge(
            { organizationId: org.id, actor: { type: 'system', id: 'retention', email: null } },
            { before },
            { trigger: 'retention', retentionDays: org.traceRetentionDays },
          );
        } catch (err) {
          this.logger.warn(
            { err, organizationId: org.id },
            'Retention purge failed; retried at the next run',
          );
        }
      }
      if (page.length < PAGE) return purged;
      after = page[page.length - 1]!.id;
    }
  }
}
