import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, MailService } from '#platform';
import { digestMail } from './digest-mail.js';
import { ReportFigures } from './report-figures.js';
import type { ReportFrequency, ScheduledReportRow } from './scheduled-report.schema.js';

const DAY_MS = 86_400_000;

/** `at` moved by `months` calendar months (UTC), the day clamped to the target month's last. */
function addMonths(at: Date, months: number): Date {
  const next = new Date(at.getTime());
  const day = next.getUTCDate();
  next.setUTCDate(1);
  next.setUTCMonth(next.getUTCMonth() + months);
  const last = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate();
  next.setUTCDate(Math.min(day, last));
  return next;
}

/** `at` plus one frequency step: 1 day, 7 days, or 1 calendar month (the day clamped to the month's last). */
export function stepOf(frequency: ReportFrequency, at: Date): Date {
  if (frequency === 'daily') return new Date(at.getTime() + DAY_MS);
  if (frequency === 'weekly') return new Date(at.getTime() + 7 * DAY_MS);
  return addMonths(at, 1);
}

/**
 * The next due time after a send (docs/compliance-officers.md, "Scheduled reports"; report-sender.spec.ts): the
 * previous one advanced by steps until it is past `now`.
 */
export function nextSendAfter(frequency: ReportFrequency, previous: Date, now: Date): Date {
  let next = stepOf(frequency, previous);
  // A report paused for years catches up in one step per period: bounded, since `now` is finite.
  while (next.getTime() <= now.getTime()) next = stepOf(frequency, next);
  return next;
}

/** One frequency length back from `now`: the period of a report's first digest. */
export function firstPeriodStart(frequency: ReportFrequency, now: Date): Date {
  if (frequency === 'daily') return new Date(now.getTime() - DAY_MS);
  if (frequency === 'weekly') return new Date(now.getTime() - 7 * DAY_MS);
  return addMonths(now, -1);
}

/** Renders a scheduled report's digest for the period since its last send and mails it to its recipients. */
@Injectable()
export class ReportSender {
  constructor(
    private readonly figures: ReportFigures,
    private readonly mail: MailService,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'appUrl'>,
  ) {}

  /** Resolves once the SMTP server accepted the message; throws otherwise. */
  async send(report: ScheduledReportRow, now: Date): Promise<void> {
    const from = report.lastSentAt ?? firstPeriodStart(report.frequency, now);
    const data = await this.figures.digest(
      report.organizationId,
      { from: from.getTime() < now.getTime() ? from : new Date(now.getTime() - 1), to: now },
      report,
    );
    const message = digestMail(report.name, data, this.config.appUrl);
    await this.mail.deliverNow({ ...message, to: report.recipients, template: 'report-digest' });
  }
}
