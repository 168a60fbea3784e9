import { Inject, Injectable } from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  Clock,
  ErrorCode,
  MailService,
  type RateLimit,
  RateLimitService,
  type RequestMeta,
  ROLES,
  TransactionHost,
} from '#platform';
import { MembersRepository } from '#identity';
import type { IntegrationTestResultDto, RecipientConfirmedDto } from './dto/integration.dto.js';
import {
  confirmRecipient,
  deliverableRecipients,
  newConfirmationToken,
  parseConfirmationToken,
  planRecipients,
  readRecipients,
  type RecipientEntry,
  type StoredRecipients,
} from './email-recipients.js';
import type { IntegrationRow } from './integration.schema.js';
import { confirmationMail, notificationMail, testMail } from './integration-mail.js';
import { invalidConfirmationToken } from './integrations.errors.js';
import { IntegrationsRepository } from './integrations.repository.js';

const HOUR_MS = 3600 * 1000;
/** Confirmation mails an organization may cause per hour (each new pending address is one). */
export const CONFIRMATION_MAILS_PER_ORG: RateLimit = { max: 50, windowMs: HOUR_MS };
/**
 * Active members whose addresses are compared with the recipients. In a larger organization a member beyond it is
 * treated as anyone else: confirmed by the link.
 */
const MEMBER_LOOKUP_LIMIT = 5000;

/** The path of the web application's confirmation page; the token follows `?token=`. */
export const CONFIRMATION_PATH = '/integrations/confirm';

/**
 * The recipients of e-mail integrations: members of the organization are confirmed at once, anyone
 * else gets one message with a single-use link and nothing else until they confirm; each recipient gets its own
 * message. The tokens' hashes live in the integration's `recipients` column.
 * See docs/compliance-officers.md, "Integrations"; test/integrations-email-optin.e2e-spec.ts.
 */
@Injectable()
export class EmailRecipientsService {
  constructor(
    private readonly repo: IntegrationsRepository,
    private readonly members: MembersRepository,
    private readonly mail: MailService,
    private readonly limiter: RateLimitService,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'appUrl' | 'authRateLimit'>,
  ) {}

  /**
   * In the caller's transaction: the column for the recipients `requested` (normalised), from `current`, with one
   * confirmation mail (outbox) to each address that needs a new link. 429 RATE_LIMITED past the organization's
   * hourly budget of confirmation mails, before anything is written.
   */
  async plan(
    row: { organizationId: string; id: string; name: string },
    current: readonly RecipientEntry[],
    requested: readonly string[],
  ): Promise<{ stored: StoredRecipients; issued: number }> {
    const nowMs = this.clock.nowMs();
    const needsLookup = requested.some((email) => !current.some((e) => e.email === email && e.confirmedAt));
    const { entries, issued } = planRecipients({
      current,
      requested,
      memberEmails: needsLookup ? await this.memberEmails(row.organizationId) : new Set(),
      nowMs,
      newToken: () => newConfirmationToken(row.organizationId, row.id),
    });
    for (let i = 0; i < issued.length; i++) {
      await this.consume(`integration-confirmations:${row.organizationId}`, CONFIRMATION_MAILS_PER_ORG);
    }
    for (const { email, token } of issued) {
      const link = `${this.config.appUrl}${CONFIRMATION_PATH}?token=${token}`;
      await this.mail.send({
        ...confirmationMail({ email, name: row.name, link }),
        to: email,
        template: 'integration-confirm',
        organizationId: row.organizationId,
      });
    }
    return { stored: { addresses: entries }, issued: issued.length };
  }

  /**
   * The public confirmation: limited per IP address like the auth routes; the token names its organization and
   * integration, whose row is locked while the pending entry is matched and confirmed (single use).
   */
  async confirm(token: string, meta: RequestMeta): Promise<RecipientConfirmedDto> {
    await this.consume(`integration-confirm:${meta.ip ?? 'unknown'}`, this.config.authRateLimit, true);
    const target = parseConfirmationToken(token);
    if (!target) throw invalidConfirmationToken();
    return this.tx.run(async () => {
      const row = await this.repo.findForUpdate(target.organizationId, target.integrationId);
      if (!row || row.type !== 'email' || !(await this.repo.organizationLive(row.organizationId))) {
        throw invalidConfirmationToken();
      }
      const now = this.clock.now();
      const result = confirmRecipient(readRecipients(row.recipients), token, now.getTime());
      if (!result) throw invalidConfirmationToken();
      await this.repo.update(row.organizationId, row.id, {
        recipients: { addresses: result.entries },
        updatedAt: now,
      });
      await this.audit.record(
        { organizationId: row.organizationId, actor: { type: 'system', id: null, email: null } },
        'integration.recipient.confirmed',
        { type: 'integration', id: row.id },
        { email: result.email },
        meta,
      );
      return { integrationId: row.id, email: result.email, confirmed: true as const };
    });
  }

  /** The test send: one message to each deliverable recipient, now; whether every one was accepted. */
  async sendTest(row: IntegrationRow): Promise<IntegrationTestResultDto> {
    const to = await this.deliverable(row);
    if (to.length === 0) {
      return {
        delivered: false,
        sent: 0,
        error: 'No confirmed recipient yet: every address is waiting for its confirmation',
      };
    }
    const message = testMail({ id: row.id, name: row.name });
    let sent = 0;
    let error: string | undefined;
    for (const email of to) {
      try {
        await this.mail.deliverNow({ ...message, to: [email], template: 'integration.test' });
        sent += 1;
      } catch (err) {
        error ??= (err as Error).message.slice(0, 300);
      }
    }
    return { delivered: error === undefined, sent, ...(error !== undefined ? { error } : {}) };
  }

  /**
   * A notification (an alert) as one outbox mail per deliverable recipient, each retried on its own; returns how
   * many were written.
   */
  async enqueue(
    row: IntegrationRow,
    message: { type: string; subject: string; text: string },
  ): Promise<number> {
    const rendered = notificationMail(message);
    return this.tx.run(async () => {
      const to = await this.deliverable(row);
      for (const email of to) {
        await this.mail.send({
          ...rendered,
          to: email,
          template: message.type,
          organizationId: row.organizationId,
        });
      }
      return to.length;
    });
  }

  private async deliverable(row: IntegrationRow): Promise<string[]> {
    const entries = readRecipients(row.recipients);
    const members = entries.every((e) => e.confirmedAt)
      ? new Set<string>()
      : await this.memberEmails(row.organizationId);
    return deliverableRecipients(entries, members);
  }

  private async memberEmails(organizationId: string): Promise<Set<string>> {
    const emails = await this.members.listEmailsByRoles(organizationId, ROLES, MEMBER_LOOKUP_LIMIT);
    return new Set(emails.map((e) => e.toLowerCase()));
  }

  /** Counts one against a limit; 429 with Retry-After beyond it (the auth limiter's code for the public route). */
  async consume(key: string, limit: RateLimit, auth = false): Promise<void> {
    const decision = await this.limiter.check(key, limit);
    if (decision.allowed) return;
    throw new AppError(
      429,
      auth ? ErrorCode.RATE_LIMIT_EXCEEDED : ErrorCode.RATE_LIMITED,
      'Too many requests; try again later',
      { headers: { 'Retry-After': String(decision.resetSeconds) } },
    );
  }
}
