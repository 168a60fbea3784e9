import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { and, eq, inArray, lte, sql } from 'drizzle-orm';
import nodemailer, { type Transporter } from 'nodemailer';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';
import { SecretBox } from '../crypto/secret-box.js';
import { TransactionHost } from '../db/transaction-host.js';
import { newId } from '../ids/object-id.js';
import { mailOutbox, type MailOutboxRow } from './mail.schema.js';
import type { RenderedMail } from './mail-templates.js';

const MAX_ATTEMPTS = 8;
// An attempt leases its message for longer than a send can take (the SMTP timeouts below), so a retry pass
// never picks up a message whose first attempt is still talking to the server.
const LEASE_MS = 120_000;
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };
const BATCH = 20;
// Backoff after a failed attempt: 30 s, 2 min, 10 min, 30 min, then hourly.
const BACKOFF_MS = [30_000, 120_000, 600_000, 1_800_000, 3_600_000];

export interface OutgoingMail extends RenderedMail {
  to: string;
  /** Template name, for logs and the outbox listing (bodies are never logged). */
  template: string;
}

/**
 * Outbox-first mail. `send` writes the message in the caller's transaction and delivers it after commit; a
 * failed delivery stays in the outbox and a periodic pass retries it with backoff. Without SMTP_URL messages are
 * kept (`stored`) and logged without their bodies, which carry tokens.
 */
@Injectable()
export class MailService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Mail');
  private readonly transport: Transporter | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tx: TransactionHost,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {
    this.transport = config.smtpUrl
      ? nodemailer.createTransport({ url: config.smtpUrl, ...SMTP_TIMEOUTS } as never, {
          from: config.mailFrom,
        })
      : undefined;
  }

  onModuleInit(): void {
    if (!this.transport || !this.config.workers) return;
    this.timer = setInterval(
      () => void this.retryDue().catch(() => undefined),
      this.config.mailRetryIntervalMs,
    );
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
    this.transport?.close();
  }

  async send(mail: OutgoingMail): Promise<string> {
    const now = this.clock.now();
    const id = newId(now.getTime());
    await this.tx.db.insert(mailOutbox).values({
      id,
      to: mail.to,
      subject: mail.subject.slice(0, 300),
      template: mail.template,
      bodyEncrypted: this.box.seal(JSON.stringify({ text: mail.text, html: mail.html })),
      status: this.transport ? 'pending' : 'stored',
      attempts: 0,
      nextAttemptAt: now,
      createdAt: now,
    });
    if (!this.transport) {
      this.logger.log(
        { outboxId: id, template: mail.template, to: mail.to },
        'Mail kept in the outbox (no SMTP_URL)',
      );
      return id;
    }
    this.tx.afterCommit(() => this.deliver(id));
    return id;
  }

  /** Delivers due pending messages; each is leased first so that two replicas never send the same one. */
  async retryDue(): Promise<number> {
    const now = this.clock.now();
    const ids = await this.tx.run(async () => {
      const due = await this.tx.db
        .select({ id: mailOutbox.id })
        .from(mailOutbox)
        .where(and(eq(mailOutbox.status, 'pending'), lte(mailOutbox.nextAttemptAt, now)))
        .orderBy(mailOutbox.nextAttemptAt)
        .limit(BATCH)
        .for('update', { skipLocked: true });
      return due.map((r) => r.id);
    });
    for (const id of ids) await this.deliver(id);
    return ids.length;
  }

  /** One delivery attempt: lease the row, send, record the outcome. */
  async deliver(id: string): Promise<void> {
    if (!this.transport) return;
    const now = this.clock.now();
    const [row] = await this.tx.db
      .update(mailOutbox)
      .set({
        attempts: sql`${mailOutbox.attempts} + 1`,
        nextAttemptAt: new Date(now.getTime() + LEASE_MS),
      })
      .where(and(eq(mailOutbox.id, id), eq(mailOutbox.status, 'pending'), lte(mailOutbox.nextAttemptAt, now)))
      .returning();
    if (!row) return;
    try {
      const body = JSON.parse(this.box.open(row.bodyEncrypted!)) as { text: string; html: string };
      await this.transport.sendMail({
        from: this.config.mailFrom,
        to: row.to,
        subject: row.subject,
        text: body.text,
        html: body.html,
      });
      await this.tx.db
        .update(mailOutbox)
        .set({ status: 'sent', sentAt: this.clock.now(), bodyEncrypted: null, lastError: null })
        .where(eq(mailOutbox.id, id));
    } catch (err) {
      await this.recordFailure(row, err);
    }
  }

  private async recordFailure(row: MailOutboxRow, err: unknown): Promise<void> {
    const failed = row.attempts >= MAX_ATTEMPTS;
    const delay = BACKOFF_MS[Math.min(row.attempts - 1, BACKOFF_MS.length - 1)]!;
    const message = err instanceof Error ? err.message : String(err);
    this.logger.warn(
      { outboxId: row.id, attempts: row.attempts, error: message.slice(0, 200) },
      'Mail delivery failed',
    );
    await this.tx.db
      .update(mailOutbox)
      .set({
        status: failed ? 'failed' : 'pending',
        lastError: message.slice(0, 500),
        nextAttemptAt: new Date(this.clock.nowMs() + delay),
      })
      .where(eq(mailOutbox.id, row.id));
  }

  /** Operator view of the outbox (CLI): bodies decrypted, newest first. */
  async list(
    limit: number,
    statuses?: MailOutboxRow['status'][],
  ): Promise<(Omit<MailOutboxRow, 'bodyEncrypted'> & { text: string | null })[]> {
    const rows = await this.tx.db
      .select()
      .from(mailOutbox)
      .where(statuses?.length ? inArray(mailOutbox.status, statuses) : undefined)
      .orderBy(sql`${mailOutbox.createdAt} desc`)
      .limit(limit);
    return rows.map(({ bodyEncrypted, ...rest }) => ({
      ...rest,
      text: bodyEncrypted ? (JSON.parse(this.box.open(bodyEncrypted)) as { text: string }).text : null,
    }));
  }
}
