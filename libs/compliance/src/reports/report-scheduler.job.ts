import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, Clock, JobScheduler } from '#platform';
import { nextSendAfter, ReportSender } from './report-sender.js';
import { ScheduledReportsRepository } from './scheduled-reports.repository.js';

/** Reports claimed per statement. */
export const REPORT_CLAIM_BATCH = 20;
/** How long a claim holds a report: longer than a render and an SMTP send take, short enough to recover a crash. */
export const REPORT_CLAIM_LEASE_MS = 10 * 60_000;

/**
 * The scheduled-report scheduler: every REPORT_SCHEDULER_INTERVAL_MS it claims the active reports
 * that are due (atomically, so with several replicas each is sent once), sends each digest, and on success records
 * the send and moves nextSendAt on by the frequency, past now. A failed send releases the claim and changes
 * nothing else, so the next tick tries again; an inactive report is never claimed. A job of the JobScheduler: it
 * runs where background work runs (the API with WORKERS=on, or apps/worker).
 * See docs/compliance-officers.md, "Scheduled reports"; test/scheduled-reports-*.e2e-spec.ts.
 */
@Injectable()
export class ReportSchedulerJob implements OnModuleInit {
  private readonly logger = new Logger('ReportScheduler');

  constructor(
    private readonly scheduler: JobScheduler,
    private readonly repo: ScheduledReportsRepository,
    private readonly sender: ReportSender,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'reportSchedulerIntervalMs'>,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'scheduled-reports',
      intervalMs: this.config.reportSchedulerIntervalMs,
      mode: 'once-per-period',
      run: () => this.tick(),
    });
  }

  /** One tick: claims and sends batch after batch while claims come back full; returns the reports sent. */
  async tick(): Promise<{ sent: number; failed: number }> {
    let sent = 0;
    // Failed claims are given back only at the end of the tick, so this tick does not claim them again.
    const failed: Array<{ id: string; leaseUntil: Date }> = [];
    for (;;) {
      const now = this.clock.now();
      const leaseUntil = new Date(now.getTime() + REPORT_CLAIM_LEASE_MS);
      const claimed = await this.repo.claimDue(now, leaseUntil, REPORT_CLAIM_BATCH);
      for (const report of claimed) {
        try {
          await this.sender.send(report, now);
        } catch (err) {
          failed.push({ id: report.id, leaseUntil });
          this.logger.warn(
            { err, reportId: report.id, organizationId: report.organizationId },
            'Scheduled report not sent; it is retried on the next tick',
          );
          continue;
        }
        sent += 1;
        const next = nextSendAfter(report.frequency, report.nextSendAt, now);
        const recorded = await this.repo.recordSent(report.organizationId, report.id, now, next, leaseUntil);
        // The lease ran out during the send and another replica claimed the report (or it was deleted meanwhile).
        if (!recorded) this.scheduler.claimsLost('scheduled-reports');
      }
      if (claimed.length < REPORT_CLAIM_BATCH) break;
    }
    for (const claim of failed) await this.repo.release(claim.id, claim.leaseUntil);
    if (sent + failed.length > 0)
      this.logger.log({ sent, failed: failed.length }, 'Scheduled reports processed');
    return { sent, failed: failed.length };
  }
}
