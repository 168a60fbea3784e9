import { Inject, Injectable } from '@nestjs/common';
import { isEmail } from 'class-validator';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  canEditOwnedResource,
  Clock,
  isObjectId,
  newId,
  type Page,
  pageRequest,
  type RateLimit,
  type RequestMeta,
  SecretBox,
  toPage,
  TransactionHost,
} from '#platform';
import { checkTargetUrl, urlHost } from '../webhooks/target-url.js';
import { sendWebhook } from '../webhooks/webhook-sender.js';
import { newWebhookSecret, signWebhook } from '../webhooks/webhook-secret.js';
import {
  type CreatedIntegrationDto,
  type CreateIntegrationDto,
  type IntegrationDeletedDto,
  type IntegrationDto,
  type IntegrationTestResultDto,
  type ListIntegrationsQueryDto,
  toIntegrationResponse,
  type UpdateIntegrationDto,
} from './dto/integration.dto.js';
import { readRecipients, type StoredRecipients } from './email-recipients.js';
import { EmailRecipientsService } from './email-recipients.service.js';
import type { IntegrationRow, IntegrationType } from './integration.schema.js';
import { quotedName } from './integration-mail.js';
import { IntegrationsRepository } from './integrations.repository.js';

const LIST_PAGE = { limit: 50, max: 100 };
/** Integrations per organization at most. */
export const MAX_INTEGRATIONS = 50;
export const INTEGRATION_RECIPIENTS_MAX = 20;
/**
 * Test sends per organization per hour, whoever sends them (each user also has 10 per hour: the `integrationTest`
 * limiter of the route).
 */
export const TEST_SENDS_PER_ORG: RateLimit = { max: 30, windowMs: 3600 * 1000 };
const URL_MAX = 2048;
const target = (id: string) => ({ type: 'integration', id });

type Config = { recipients: string[] } | { url: string };

/** A notification sent through an integration. */
export interface IntegrationMessage {
  /** The event type (`alert.triggered`, `integration.test`): the webhook envelope's `type`, the mail's template. */
  type: string;
  subject: string;
  text: string;
  data: Record<string, unknown>;
  /** webhook: the `webhook-id`, the same on every attempt of one notification (receivers deduplicate on it). */
  id?: string;
}

/** Slack's escaping of message text: `&`, `<` and `>` only. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The config of a type, checked field by field (the DTO only knows it is an object). */
function configError(message: string, field = 'config'): AppError {
  return AppError.validation(message, [{ field, message }]);
}

/**
 * Notification channels of an organization (docs/compliance-officers.md, "Integrations"): CRUD, a write-only sealed
 * URL, and a test send.
 */
@Injectable()
export class IntegrationsService {
  constructor(
    private readonly repo: IntegrationsRepository,
    private readonly box: SecretBox,
    private readonly emails: EmailRecipientsService,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'webhookAllowPrivateNetworks'>,
  ) {}

  async list(actor: Actor, query: ListIntegrationsQueryDto): Promise<Page<IntegrationDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.list(actor.organizationId, page);
    return toPage(rows.map(toIntegrationResponse), total, page);
  }

  async get(actor: Actor, id: string): Promise<IntegrationDto> {
    return toIntegrationResponse(await this.load(actor.organizationId, id));
  }

  async create(actor: Actor, dto: CreateIntegrationDto, meta: RequestMeta): Promise<CreatedIntegrationDto> {
    const config = await this.checkConfig(dto.type, dto.config);
    const secret = dto.type === 'webhook' ? newWebhookSecret() : undefined;
    const now = this.clock.now();
    const id = newId(now.getTime());
    return this.tx.run(async () => {
      if ((await this.repo.count(actor.organizationId)) >= MAX_INTEGRATIONS) {
        throw AppError.conflict(`An organization has at most ${MAX_INTEGRATIONS} integrations`);
      }
      const recipients =
        'recipients' in config
          ? await this.emails.plan(
              { organizationId: actor.organizationId, id, name: dto.name },
              [],
              config.recipients,
            )
          : undefined;
      const row = await this.repo.insert({
        id,
        organizationId: actor.organizationId,
        type: dto.type,
        name: dto.name,
        ...this.stored(config, recipients?.stored),
        secretSealed: secret ? this.box.seal(secret) : null,
        createdBy: actor.userId,
        createdAt: now,
        updatedAt: now,
      });
      await this.audit.record(
        actor,
        'integration.create',
        target(row.id),
        { type: row.type, name: row.name, ...(recipients ? { confirmationsSent: recipients.issued } : {}) },
        meta,
      );
      return { ...toIntegrationResponse(row), ...(secret ? { secret } : {}) };
    });
  }

  async update(
    actor: Actor,
    id: string,
    dto: UpdateIntegrationDto,
    meta: RequestMeta,
  ): Promise<IntegrationDto> {
    const existing = await this.loadEditable(actor, id);
    const config = dto.config !== undefined ? await this.checkConfig(existing.type, dto.config) : undefined;
    return this.tx.run(async () => {
      // Locked: a recipient confirming meanwhile is kept, not overwritten with the list read before.
      const locked = await this.repo.findForUpdate(actor.organizationId, id);
      if (!locked) throw AppError.notFound('Integration');
      const recipients =
        config && 'recipients' in config
          ? await this.emails.plan(
              { organizationId: locked.organizationId, id, name: dto.name ?? locked.name },
              readRecipients(locked.recipients),
              config.recipients,
            )
          : undefined;
      const row = await this.repo.update(actor.organizationId, id, {
        ...(dto.name !== undefined ? { name: dto.name } : {}),
        ...(config ? this.stored(config, recipients?.stored) : {}),
        updatedAt: this.clock.now(),
      });
      if (!row) throw AppError.notFound('Integration');
      const fields = [...(dto.name !== undefined ? ['name'] : []), ...(config ? ['config'] : [])];
      await this.audit.record(
        actor,
        'integration.update',
        target(id),
        { fields, ...(recipients ? { confirmationsSent: recipients.issued } : {}) },
        meta,
      );
      return toIntegrationResponse(row);
    });
  }

  async remove(actor: Actor, id: string, meta: RequestMeta): Promise<IntegrationDeletedDto> {
    await this.loadEditable(actor, id);
    return this.tx.run(async () => {
      const row = await this.repo.delete(actor.organizationId, id);
      if (!row) throw AppError.notFound('Integration');
      await this.audit.record(
        actor,
        'integration.delete',
        target(id),
        { type: row.type, name: row.name },
        meta,
      );
      return { id, deleted: true as const };
    });
  }

  /**
   * Sends a test message now and says whether the channel accepted it; at most TEST_SENDS_PER_ORG per organization
   * (the route limits each user too). An e-mail goes to each confirmed recipient on its own, with fixed text: the
   * integration's name is shown as quoted data, never as the subject or the opening words.
   */
  async test(actor: Actor, id: string): Promise<IntegrationTestResultDto> {
    const row = await this.loadEditable(actor, id);
    await this.emails.consume(`integration-tests:${row.organizationId}`, TEST_SENDS_PER_ORG);
    if (row.type === 'email') return this.emails.sendTest(row);
    const { retryAfterMs: _retryAfter, ...result } = await this.deliver(row, {
      type: 'integration.test',
      subject: 'Test notification',
      text: `Test notification from the governance service for the integration ${quotedName(row.name)}.`,
      data: { integrationId: row.id, organizationId: row.organizationId },
    });
    return result;
  }

  /**
   * Sends one notification through the integration, for the notifier: to an e-mail integration, one outbox mail per
   * confirmed recipient (each retried on its own, so a refusal for one address never repeats the others'); to Slack
   * or a webhook, at once. Never throws; says whether it was accepted.
   */
  async notify(
    row: IntegrationRow,
    message: IntegrationMessage,
  ): Promise<IntegrationTestResultDto & { retryAfterMs?: number }> {
    if (row.type === 'email') {
      try {
        return { delivered: true, sent: await this.emails.enqueue(row, message) };
      } catch (err) {
        return { delivered: false, error: (err as Error).message.slice(0, 300) };
      }
    }
    return this.deliver(row, message);
  }

  /**
   * Posts one notification to a Slack or webhook integration: a Slack incoming-webhook message, or a Standard
   * Webhooks envelope signed with its secret. Never throws; says whether it was accepted.
   */
  private async deliver(
    row: IntegrationRow,
    message: IntegrationMessage,
  ): Promise<IntegrationTestResultDto & { retryAfterMs?: number }> {
    const url = this.box.open(row.urlSealed!);
    const nowMs = this.clock.nowMs();
    let body: string;
    let headers: Record<string, string> = { 'content-type': 'application/json' };
    if (row.type === 'slack') {
      // Slack reads <…> as mentions and links: text from the organization (an alert's name) is escaped as
      // Slack asks, so it cannot ping a channel or disguise a link.
      body = JSON.stringify({ text: slackEscape(message.text) });
    } else {
      const messageId = message.id ?? `msg_${newId(nowMs)}`;
      const timestamp = Math.floor(nowMs / 1000);
      body = JSON.stringify({
        type: message.type,
        timestamp: new Date(nowMs).toISOString(),
        data: message.data,
      });
      headers = {
        ...headers,
        'webhook-id': messageId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(this.box.open(row.secretSealed!), messageId, timestamp, body),
      };
    }
    const result = await sendWebhook(url, body, headers, {
      allowPrivate: this.config.webhookAllowPrivateNetworks,
      nowMs,
    });
    const delivered = result.status !== undefined && result.status >= 200 && result.status < 300;
    return {
      delivered,
      ...(result.status !== undefined ? { status: result.status } : {}),
      ...(!delivered ? { error: (result.error ?? `HTTP ${result.status}`).slice(0, 300) } : {}),
      ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}),
    };
  }

  private async checkConfig(type: IntegrationType, config: Record<string, unknown>): Promise<Config> {
    const keys = Object.keys(config);
    if (type === 'email') {
      const extra = keys.filter((k) => k !== 'recipients');
      if (extra.length > 0)
        throw configError(`config of an email integration has only recipients (not ${extra[0]})`);
      const raw = config.recipients;
      if (!Array.isArray(raw) || !raw.every((r) => typeof r === 'string' && r.length <= 254)) {
        throw configError('config.recipients must be a list of e-mail addresses', 'config.recipients');
      }
      const recipients = [...new Set(raw.map((r: string) => r.trim().toLowerCase()))];
      if (recipients.length < 1 || recipients.length > INTEGRATION_RECIPIENTS_MAX) {
        throw configError(
          `config.recipients must list 1 to ${INTEGRATION_RECIPIENTS_MAX} addresses`,
          'config.recipients',
        );
      }
      const bad = recipients.find((r) => !isEmail(r));
      if (bad !== undefined)
        throw configError('each recipient must be a valid e-mail address', 'config.recipients');
      return { recipients };
    }
    const extra = keys.filter((k) => k !== 'url');
    if (extra.length > 0) throw configError(`config of a ${type} integration has only url (not ${extra[0]})`);
    if (typeof config.url !== 'string' || config.url.length > URL_MAX) {
      throw configError(`config.url must be a URL of at most ${URL_MAX} characters`, 'config.url');
    }
    return { url: await checkTargetUrl(config.url, this.config.webhookAllowPrivateNetworks, 'config.url') };
  }

  private stored(
    config: Config,
    recipients: StoredRecipients | undefined,
  ): Pick<IntegrationRow, 'recipients' | 'urlSealed' | 'urlHost'> {
    return 'recipients' in config
      ? { recipients: recipients ?? null, urlSealed: null, urlHost: null }
      : { recipients: null, urlSealed: this.box.seal(config.url), urlHost: urlHost(config.url) };
  }

  /** The integration, if the caller may change it: owners and admins any, members their own (403 otherwise). */
  private async loadEditable(actor: Actor, id: string): Promise<IntegrationRow> {
    const row = await this.load(actor.organizationId, id);
    if (!canEditOwnedResource(actor, row.createdBy)) {
      throw AppError.forbidden('Members may change only the integrations they created');
    }
    return row;
  }

  private async load(organizationId: string, id: string): Promise<IntegrationRow> {
    const row = isObjectId(id) ? await this.repo.find(organizationId, id) : undefined;
    if (!row) throw AppError.notFound('Integration');
    return row;
  }
}
