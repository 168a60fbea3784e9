import { Inject, Injectable } from '@nestjs/common';
import {
  type Actor,
  agentScopeOf,
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  canAccessAgent,
  Clock,
  type DeletedDto,
  DomainEvents,
  ErrorCode,
  isObjectId,
  newId,
  Outbox,
  type OutboxRef,
  type Page,
  type PaginationQueryDto,
  pageRequest,
  type RequestMeta,
  SecretBox,
  toPage,
  TransactionHost,
} from '#platform';
import { AgentsRepository } from '../agents/agents.repository.js';
import {
  type CreatedWebhookDto,
  type CreateWebhookDto,
  type ListDeliveriesQueryDto,
  maskedWebhookUrl,
  type RotateSecretDto,
  toDeliveryResponse,
  toWebhookResponse,
  type UpdateWebhookDto,
  type WebhookDeliveryDto,
  type WebhookDto,
  type WebhookSecretDto,
} from './dto/webhook.dto.js';
import { checkTargetUrl, urlHost } from './target-url.js';
import { WebhookDeliveryWorker } from './webhook-delivery.worker.js';
import { newWebhookSecret } from './webhook-secret.js';
import type { WebhookRow } from './webhook.schema.js';
import { WebhookErrorCode } from './webhooks.errors.js';
import { WebhooksRepository } from './webhooks.repository.js';

const LIST_PAGE = { limit: 50, max: 100 };
/** Webhooks per organization at most. */
export const MAX_WEBHOOKS = 50;

const target = (id: string) => ({ type: 'webhook', id });

/**
 * Webhooks of an organization (docs/dashboard-developers.md,
 * "Review, approval patterns, webhooks and the event stream"): CRUD, secrets, test sends, the delivery log and
 * redelivery.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly repo: WebhooksRepository,
    private readonly worker: WebhookDeliveryWorker,
    private readonly agents: AgentsRepository,
    private readonly events: DomainEvents,
    private readonly outbox: Outbox,
    private readonly audit: AuditLog,
    private readonly box: SecretBox,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(actor: Actor, query: PaginationQueryDto): Promise<Page<WebhookDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.list(actor.organizationId, agentScopeOf(actor), page);
    return toPage(rows.map(toWebhookResponse), total, page);
  }

  async get(actor: Actor, id: string): Promise<WebhookDto> {
    return toWebhookResponse(await this.visible(actor, id));
  }

  async create(actor: Actor, dto: CreateWebhookDto, meta: RequestMeta): Promise<CreatedWebhookDto> {
    const url = await this.checkUrl(dto.url);
    await this.checkAgent(actor, dto.filterAgentId ?? null);
    const secret = newWebhookSecret();
    const now = this.clock.now();
    const row = await this.tx.run(async () => {
      await this.audit.lockOrganization(actor.organizationId);
      if ((await this.repo.count(actor.organizationId)) >= MAX_WEBHOOKS) {
        throw AppError.conflict(`An organization has at most ${MAX_WEBHOOKS} webhooks`);
      }
      const inserted = await this.repo.insert({
        id: newId(now.getTime()),
        organizationId: actor.organizationId,
        url,
        events: dto.events,
        filterAgentId: dto.filterAgentId ?? null,
        description: dto.description || null,
        isActive: true,
        disabledReason: null,
        secretSealed: this.box.seal(secret),
        previousSecretSealed: null,
        previousSecretExpiresAt: null,
        createdBy: actor.userId ?? null,
        createdAt: now,
        updatedAt: now,
      });
      await this.audit.record(
        actor,
        'webhook.created',
        target(inserted.id),
        { url: this.displayUrl(url), events: dto.events, filterAgentId: inserted.filterAgentId },
        meta,
      );
      return inserted;
    });
    return { ...toWebhookResponse(row), secret };
  }

  async update(actor: Actor, id: string, dto: UpdateWebhookDto, meta: RequestMeta): Promise<WebhookDto> {
    const existing = await this.visible(actor, id);
    // The masked URL sent back as it was read (a form round trip) keeps the real one.
    const url =
      dto.url === undefined || dto.url === maskedWebhookUrl(existing.url)
        ? undefined
        : await this.checkUrl(dto.url);
    if (dto.filterAgentId !== undefined) await this.checkAgent(actor, dto.filterAgentId);
    const set: Partial<WebhookRow> = {};
    if (url !== undefined && url !== existing.url) set.url = url;
    if (dto.events !== undefined) set.events = dto.events;
    if (dto.filterAgentId !== undefined) set.filterAgentId = dto.filterAgentId;
    if (dto.description !== undefined) set.description = dto.description || null;
    if (dto.isActive !== undefined && dto.isActive !== existing.isActive) {
      set.isActive = dto.isActive;
      set.disabledReason = dto.isActive ? null : 'Disabled by a user';
    }
    if (Object.keys(set).length === 0) return toWebhookResponse(existing);
    const row = await this.tx.run(async () => {
      const updated = await this.repo.update(actor.organizationId, id, {
        ...set,
        updatedAt: this.clock.now(),
      });
      if (!updated) throw AppError.notFound('Webhook');
      const changes = { ...set, ...(set.url ? { url: this.displayUrl(set.url) } : {}) };
      await this.audit.record(actor, 'webhook.updated', target(id), { changes }, meta);
      return updated;
    });
    return toWebhookResponse(row);
  }

  async delete(actor: Actor, id: string, meta: RequestMeta): Promise<DeletedDto> {
    const existing = await this.visible(actor, id);
    await this.tx.run(async () => {
      if (!(await this.repo.delete(actor.organizationId, id))) throw AppError.notFound('Webhook');
      await this.audit.record(
        actor,
        'webhook.deleted',
        target(id),
        { url: this.displayUrl(existing.url) },
        meta,
      );
    });
    return { id, deleted: true };
  }

  /** A new secret; the old one keeps signing beside it for the grace period (none by default). */
  async rotateSecret(
    actor: Actor,
    id: string,
    dto: RotateSecretDto,
    meta: RequestMeta,
  ): Promise<WebhookSecretDto> {
    const existing = await this.visible(actor, id);
    const secret = newWebhookSecret();
    const grace = dto.gracePeriodSeconds ?? 0;
    const now = this.clock.now();
    const expiresAt = grace > 0 ? new Date(now.getTime() + grace * 1000) : null;
    await this.tx.run(async () => {
      await this.repo.update(actor.organizationId, id, {
        secretSealed: this.box.seal(secret),
        previousSecretSealed: expiresAt ? existing.secretSealed : null,
        previousSecretExpiresAt: expiresAt,
        updatedAt: now,
      });
      await this.audit.record(
        actor,
        'webhook.secret_rotated',
        target(id),
        { gracePeriodSeconds: grace },
        meta,
      );
    });
    return { secret, previousSecretExpiresAt: expiresAt?.toISOString() ?? null };
  }

  /**
   * Sends the event `webhook.test` to this webhook (whatever it subscribes to) and answers the delivery after its
   * first attempt; failed attempts are retried like any other.
   */
  async test(actor: Actor, id: string, meta: RequestMeta): Promise<WebhookDeliveryDto> {
    const webhook = await this.visible(actor, id);
    if (!webhook.isActive) {
      throw AppError.conflict('The webhook is disabled; enable it first', WebhookErrorCode.WEBHOOK_DISABLED);
    }
    const scheduled = await this.tx.run(async () => {
      const [event] = await this.events.publish([
        {
          organizationId: actor.organizationId,
          type: 'webhook.test',
          agentId: null,
          data: { webhookId: id, message: 'A test event from the governance service' },
        },
      ]);
      const result = await this.worker.schedule([this.worker.newDelivery(id, event!)]);
      await this.audit.record(actor, 'webhook.tested', target(id), { eventId: event!.id }, meta);
      return result;
    });
    return this.afterFirstAttempt(actor.organizationId, id, scheduled);
  }

  async deliveries(
    actor: Actor,
    id: string,
    query: ListDeliveriesQueryDto,
  ): Promise<Page<WebhookDeliveryDto>> {
    await this.visible(actor, id);
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.deliveries(actor.organizationId, id, query.status, page);
    return toPage(rows.map(toDeliveryResponse), total, page);
  }

  /** A new attempt of a delivery's event (same `webhook-id`), as a new delivery. */
  async redeliver(
    actor: Actor,
    id: string,
    deliveryId: string,
    meta: RequestMeta,
  ): Promise<WebhookDeliveryDto> {
    const webhook = await this.visible(actor, id);
    if (!isObjectId(deliveryId)) throw AppError.notFound('Delivery');
    const original = await this.repo.findDelivery(actor.organizationId, id, deliveryId);
    if (!original) throw AppError.notFound('Delivery');
    if (!webhook.isActive) {
      throw AppError.conflict('The webhook is disabled; enable it first', WebhookErrorCode.WEBHOOK_DISABLED);
    }
    const event = await this.events.get(actor.organizationId, original.eventId);
    if (!event) throw new AppError(404, ErrorCode.NOT_FOUND, 'The delivery’s event is no longer kept');
    const scheduled = await this.tx.run(async () => {
      const result = await this.worker.schedule([this.worker.newDelivery(id, event, original.id)]);
      await this.audit.record(
        actor,
        'webhook.redelivered',
        target(id),
        { deliveryId: original.id, eventId: event.id },
        meta,
      );
      return result;
    });
    return this.afterFirstAttempt(actor.organizationId, id, scheduled);
  }

  /** Runs a committed delivery's first attempt and answers the delivery as it then stands. */
  private async afterFirstAttempt(
    organizationId: string,
    webhookId: string,
    scheduled: { ids: string[]; attempts: OutboxRef[] },
  ): Promise<WebhookDeliveryDto> {
    await this.outbox.dispatch(scheduled.attempts);
    const row = await this.repo.findDelivery(organizationId, webhookId, scheduled.ids[0]!);
    return toDeliveryResponse(row!);
  }

  /** The webhook, if the caller may see it: its organization's, and for an agent-scoped key, of an agent in scope. */
  private async visible(actor: Actor, id: string): Promise<WebhookRow> {
    if (!isObjectId(id)) throw AppError.notFound('Webhook');
    const row = await this.repo.find(actor.organizationId, id);
    if (!row) throw AppError.notFound('Webhook');
    if (
      agentScopeOf(actor) !== null &&
      (row.filterAgentId === null || !canAccessAgent(actor, row.filterAgentId))
    ) {
      throw AppError.notFound('Webhook');
    }
    return row;
  }

  /** The agent filter must name an agent of the organization; a key scoped to agents must filter on one of them. */
  private async checkAgent(actor: Actor, agentId: string | null): Promise<void> {
    if (agentId === null) {
      if (agentScopeOf(actor) !== null) {
        throw AppError.forbidden(
          'An API key scoped to agents may only manage webhooks filtered on one of them',
        );
      }
      return;
    }
    if (!canAccessAgent(actor, agentId)) throw AppError.forbidden('This API key is not scoped to that agent');
    if (!(await this.agents.find(actor.organizationId, agentId))) {
      const message = 'filterAgentId does not name an agent of this organization';
      throw AppError.validation(message, [{ field: 'filterAgentId', message }]);
    }
  }

  private checkUrl(raw: string): Promise<string> {
    return checkTargetUrl(raw, this.config.webhookAllowPrivateNetworks);
  }

  /** A URL for the audit log: its scheme and host only (the URL is write-only; its path may carry a token). */
  private displayUrl(url: string): string {
    return urlHost(url);
  }
}
