import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import nodemailer, { type Transporter } from 'nodemailer';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Outbox } from '../outbox/outbox.js';
import type { OutboxStatus } from '../outbox/outbox.schema.js';
import type { MailBody } from '../outbox/outbox-topics.js';
import type { RenderedMail } from './mail-templates.js';

const MAX_ATTEMPTS = 8;
// An attempt leases its message for longer than a send can take (the SMTP timeouts below), so a retry pass
// never picks up a message whose first attempt is still talking to the server.
const LEASE_MS = 120_000;
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };
// Backoff after a failed attempt: 30 s, 2 min, 10 min, 30 min, then hourly.
const BACKOFF_MS = [30_000, 120_000, 600_000, 1_800_000, 3_600_000];

export interface OutgoingMail extends RenderedMail {
  to: string;
  /** Template name, for logs and the outbox listing (bodies are never logged). */
  template: string;
  /** The organization the message is about, if any: its message is erased and exported with it. */
  organizationId?: string;
}

/** A message as the operator listing shows it. */
export interface MailListing {
  id: string;
  to: string;
  subject: string;
  template: string;
  status: OutboxStatus;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: Date;
  createdAt: Date;
  sentAt: Date | null;
  text: string | null;
}

/**
 * Mail through the outbox (topic `mail.send`): `send` writes the message in the caller's transaction and it is
 * delivered after commit; a failed delivery is retried with backoff by the outbox's retry pass. The body carries
 * tokens: it travels as the message's sealed part (encrypted at rest, cleared once sent). Without SMTP_URL messages
 * are kept (`stored`) and logged without their bodies.
 */
@Injectable()
export class MailService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Mail');
  private readonly transport: Transporter | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly outbox: Outbox,
  ) {
    this.transport = config.smtpUrl
      ? nodemailer.createTransport({ url: config.smtpUrl, ...SMTP_TIMEOUTS } as never, {
          from: config.mailFrom,
        })
      : undefined;
  }

  onModuleInit(): void {
    const transport = this.transport;
    if (!transport) return;
    this.outbox.handle('mail.send', {
      maxAttempts: MAX_ATTEMPTS,
      backoffMs: BACKOFF_MS,
      leaseMs: LEASE_MS,
      deliver: async ({ payload, secret }) => {
        await transport.sendMail({
          from: this.config.mailFrom,
          to: payload.to,
          subject: payload.subject,
          text: secret?.text,
          html: secret?.html,
        });
      },
    });
  }

  onModuleDestroy(): void {
    this.transport?.close();
  }

  async send(mail: OutgoingMail): Promise<string> {
    const body: MailBody = { text: mail.text, html: mail.html };
    const id = await this.outbox.enqueue('mail.send', {
      organizationId: mail.organizationId ?? null,
      payload: { to: mail.to, subject: mail.subject.slice(0, 300), template: mail.template },
      secret: body,
      hold: !this.transport,
    });
    if (!this.transport) {
      this.logger.log(
        { outboxId: id, template: mail.template, to: mail.to },
        'Mail kept in the outbox (no SMTP_URL)',
      );
    }
    return id;
  }

  /**
   * Sends one message now, to every recipient at once, and resolves when the SMTP server accepted it; throws when it
   * was refused or no SMTP_URL is set. For callers that report the outcome themselves and retry on their own terms
   * (scheduled reports: a failed send leaves the report due); everything else goes through `send` and the outbox.
   */
  async deliverNow(mail: Omit<OutgoingMail, 'to'> & { to: readonly string[] }): Promise<void> {
    if (!this.transport) throw new Error('No SMTP server is configured (SMTP_URL)');
    await this.transport.sendMail({
      from: this.config.mailFrom,
      to: [...mail.to],
      subject: mail.subject.slice(0, 300),
      text: mail.text,
      html: mail.html,
    });
  }

  /** The outbox's retry pass for mail alone (the scheduler runs it for every topic); returns the messages claimed. */
  retryDue(): Promise<number> {
    return this.outbox.runDue('mail.send');
  }

  /** Operator view of the mail in the outbox (CLI): bodies decrypted, newest first. */
  async list(limit: number, statuses?: OutboxStatus[]): Promise<MailListing[]> {
    const rows = await this.outbox.list(limit, { topic: 'mail.send', statuses, withSecret: true });
    return rows.map(({ payload, secret, topic: _topic, organizationId: _org, ...rest }) => {
      const envelope = payload as { to: string; subject: string; template: string };
      return {
        ...rest,
        to: envelope.to,
        subject: envelope.subject,
        template: envelope.template,
        text: (secret as MailBody | null | undefined)?.text ?? null,
      };
    });
  }
}
