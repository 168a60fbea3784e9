import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { MembersRepository } from '#identity';
import {
  APP_CONFIG,
  type AppConfig,
  Clock,
  JobScheduler,
  MailService,
  type Role,
  TransactionHost,
} from '#platform';
import {
  INCIDENT_NOTICE_TEMPLATES,
  incidentNoticeMail,
  type IncidentNoticeKind,
} from './incident-notice-mail.js';
import type { IncidentRow } from './incident.schema.js';
import { IncidentsRepository } from './incidents.repository.js';

/** Incidents claimed per statement (and per transaction). */
export const INCIDENT_NOTICE_BATCH = 100;
/** The roles told about an incident's deadline. */
const NOTICE_ROLES: readonly Role[] = ['owner', 'admin'];
/** Recipients per organization and notice, at most. */
const MAX_RECIPIENTS = 200;

/**
 * The article 73 deadline notices: once an open incident's deadline is 24 hours away, and once it has passed, every
 * active owner and admin of its organization gets an e-mail (once each notice per incident; an incident already
 * overdue never gets the due-soon one). A job of the JobScheduler (WORKERS=on). Each batch is one transaction: the
 * claim (a conditional `UPDATE … RETURNING` of rows picked with `FOR UPDATE SKIP LOCKED`) and the mails it writes to
 * the outbox commit together, so with several replicas each notice is claimed, and sent, exactly once; delivery
 * happens after the commit.
 */
@Injectable()
export class IncidentNoticesJob implements OnModuleInit {
  private readonly logger = new Logger('IncidentNotices');

  constructor(
    private readonly scheduler: JobScheduler,
    private readonly incidents: IncidentsRepository,
    private readonly members: MembersRepository,
    private readonly mail: MailService,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'appUrl' | 'incidentNoticeIntervalMs'>,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'incident-notices',
      intervalMs: this.config.incidentNoticeIntervalMs,
      mode: 'once-per-period',
      run: () => this.run(),
    });
  }

  /** Sends the notices now due; returns how many incidents were notified of each kind. */
  async run(): Promise<{ dueSoon: number; overdue: number }> {
    const now = this.clock.now();
    const overdue = await this.drain('overdue', now);
    const dueSoon = await this.drain('due_soon', now);
    if (dueSoon + overdue > 0) this.logger.log({ dueSoon, overdue }, 'Incident deadline notices sent');
    return { dueSoon, overdue };
  }

  /** Claims and notifies batch after batch, while a claim comes back full. */
  private async drain(kind: IncidentNoticeKind, now: Date): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.tx.run(async () => {
        const rows =
          kind === 'due_soon'
            ? await this.incidents.claimDueSoon(now, INCIDENT_NOTICE_BATCH)
            : await this.incidents.claimOverdue(now, INCIDENT_NOTICE_BATCH);
        await this.notify(kind, rows);
        return rows.length;
      });
      total += claimed;
      if (claimed < INCIDENT_NOTICE_BATCH) return total;
    }
  }

  /** Writes one mail per owner and admin of each incident's organization (in the claim's transaction). */
  private async notify(kind: IncidentNoticeKind, rows: readonly IncidentRow[]): Promise<void> {
    const recipients = new Map<string, string[]>();
    for (const row of rows) {
      let to = recipients.get(row.organizationId);
      if (!to) {
        to = await this.members.listEmailsByRoles(row.organizationId, NOTICE_ROLES, MAX_RECIPIENTS);
        recipients.set(row.organizationId, to);
      }
      if (to.length === 0) continue;
      const message = incidentNoticeMail(kind, row, this.config.appUrl);
      for (const address of to) {
        await this.mail.send({
          to: address,
          organizationId: row.organizationId,
          template: INCIDENT_NOTICE_TEMPLATES[kind],
          ...message,
        });
      }
    }
  }
}
