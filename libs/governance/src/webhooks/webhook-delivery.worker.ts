import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { and, inArray, lt, ne } from 'drizzle-orm';
import {
  APP_CONFIG,
  type AppConfig,
  Clock,
  DATABASE,
  type DatabaseHandle,
  type DomainEventRow,
  DomainEvents,
  InvalidatedCache,
  JobScheduler,
  newId,
  Outbox,
  type OutboxDelivery,
  outboxBackoffMs,
  type OutboxRef,
  OutboxRetry,
  SecretBox,
  TransactionHost,
} from '#platform';
import { sendWebhook } from './webhook-sender.js';
import { signWebhook } from './webhook-secret.js';
import { webhookDeliveries, type WebhookDeliveryRow, type WebhookRow } from './webhook.schema.js';
import { WebhooksRepository } from './webhooks.repository.js';

export const WEBHOOKS_CHANGED_CHANNEL = 'webhooks_changed';

/** Attempts of one delivery at most, and the pauses between them (contract §8: about 30 s, 2 min, 10 min, 1 h, 6 h). */
export const WEBHOOK_MAX_ATTEMPTS = 6;
export const WEBHOOK_BACKOFF_MS = [30_000, 120_000, 600_000, 3_600_000, 21_600_000] as const;
export const WEBHOOK_BACKOFF_JITTER = 0.2;
const PURGE_INTERVAL_MS = 3600 * 1000;
const PURGE_BATCH = 5000;

/** What the fan-out needs of a webhook. */
interface WebhookTarget {
  id: string;
  events: string[];
  filterAgentId: string | null;
}

/** Whether a webhook receives an event: subscribed to its type, and the event is of its agent if it filters. */
export function receives(
  target: WebhookTarget,
  event: Pick<DomainEventRow, 'type' | 'agentId' | 'data'>,
): boolean {
  if (event.type === 'webhook.test') return false;
  if (!target.events.includes(event.type)) return false;
  return target.filterAgentId === null || target.filterAgentId === event.agentId;
}

/**
 * Webhook delivery. The fan-out of committed domain events creates one delivery per (webhook, event) and its first
 * attempt, as an outbox message, in one transaction; the outbox runs the attempts (at once after the commit, then by
 * its retry pass, which claims due messages with FOR UPDATE SKIP LOCKED and leases each, so no two replicas send an
 * attempt twice). An attempt signs the body per Standard Webhooks with the current secret (and the previous one
 * during a grace period) and posts it through the SSRF guard.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly targets: InvalidatedCache<WebhookTarget[]>;

  constructor(
    private readonly repo: WebhooksRepository,
    private readonly outbox: Outbox,
    private readonly events: DomainEvents,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly tx: TransactionHost,
    private readonly scheduler: JobScheduler,
    @Inject(DATABASE) handle: DatabaseHandle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.targets = new InvalidatedCache(WEBHOOKS_CHANGED_CHANNEL, handle, tx);
  }

  async onModuleInit(): Promise<void> {
    await this.targets.start();
    this.events.consume((events) => this.fanOut(events));
    this.outbox.handle('webhook.deliver', {
      deliver: (message) => this.attempt(message),
      maxAttempts: WEBHOOK_MAX_ATTEMPTS,
      backoffMs: WEBHOOK_BACKOFF_MS,
      jitter: WEBHOOK_BACKOFF_JITTER,
      leaseMs: 60_000,
    });
    this.scheduler.register({
      name: 'webhook-deliveries-purge',
      intervalMs: PURGE_INTERVAL_MS,
      run: () => this.purge(),
    });
  }

  onModuleDestroy(): Promise<void> {
    return this.targets.stop();
  }

  /** Call inside the transaction that changed one of the organization's webhooks. */
  announceChange(organizationId: string): Promise<void> {
    return this.targets.announce(organizationId);
  }

  /** A new delivery row, pending, of an event to a webhook. */
  newDelivery(
    webhookId: string,
    event: DomainEventRow,
    redeliveryOf: string | null = null,
  ): WebhookDeliveryRow {
    const now = this.clock.now();
    return {
      id: newId(now.getTime()),
      organizationId: event.organizationId,
      webhookId,
      eventId: event.id,
      eventType: event.type,
      status: 'pending',
      attempts: 0,
      responseStatus: null,
      responseBody: null,
      error: null,
      nextAttemptAt: now,
      redeliveryOf,
      createdAt: now,
      completedAt: null,
    };
  }

  /**
   * Inserts deliveries and their first attempts in the current transaction; returns the ids inserted and their
   * attempts. The attempts run after the commit, unless `dispatch` is false: the caller then runs them
   * (`outbox.dispatch`) once committed, to wait for the first.
   */
  async schedule(
    rows: WebhookDeliveryRow[],
    dispatch = true,
  ): Promise<{ ids: string[]; attempts: OutboxRef[] }> {
    const ids = await this.repo.insertDeliveries(rows);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const messages = ids.map((deliveryId) => ({
      organizationId: byId.get(deliveryId)!.organizationId,
      payload: { deliveryId },
    }));
    if (dispatch) return { ids, attempts: await this.outbox.enqueueMany('webhook.deliver', messages) };
    const { query, pending } = this.outbox.enqueueQuery('webhook.deliver', messages);
    await this.tx.query(query);
    return { ids, attempts: pending };
  }

  /** The consumer of committed events: their deliveries, in the fan-out's transaction (idempotent). */
  private async fanOut(events: readonly DomainEventRow[]): Promise<void> {
    const rows: WebhookDeliveryRow[] = [];
    const byOrganization = new Map<string, DomainEventRow[]>();
    for (const event of events) {
      const list = byOrganization.get(event.organizationId) ?? [];
      list.push(event);
      byOrganization.set(event.organizationId, list);
    }
    for (const [organizationId, list] of byOrganization) {
      const targets = (await this.targets.get(organizationId, () => this.loadTargets(organizationId))) ?? [];
      for (const target of targets) {
        for (const event of list) if (receives(target, event)) rows.push(this.newDelivery(target.id, event));
      }
    }
    if (rows.length > 0) await this.schedule(rows);
  }

  private async loadTargets(organizationId: string): Promise<WebhookTarget[]> {
    const rows = await this.repo.active(organizationId);
    return rows.map((row) => ({ id: row.id, events: row.events, filterAgentId: row.filterAgentId }));
  }

  /** One attempt of a delivery (an outbox message of `webhook.deliver`). */
  private async attempt(message: OutboxDelivery<'webhook.deliver'>): Promise<void> {
    const found = await this.repo.deliveryForSend(message.payload.deliveryId);
    if (!found || found.delivery.status !== 'pending') return;
    const { delivery, webhook } = found;
    const attempt = message.attempt;
    if (!webhook?.isActive) {
      return this.settle(delivery, attempt, 'failed', { error: 'The webhook is disabled or deleted' });
    }
    const event = await this.events.get(delivery.organizationId, delivery.eventId);
    if (!event) return this.settle(delivery, attempt, 'failed', { error: 'The event is no longer kept' });

    const body = JSON.stringify({
      type: event.type,
      timestamp: event.createdAt.toISOString(),
      data: event.data,
    });
    const timestamp = Math.floor(this.clock.nowMs() / 1000);
    const result = await sendWebhook(
      webhook.url,
      body,
      {
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': this.secretsOf(webhook)
          .map((secret) => signWebhook(secret, event.id, timestamp, body))
          .join(' '),
      },
      { allowPrivate: this.config.webhookAllowPrivateNetworks, nowMs: this.clock.nowMs() },
    );
    const answer = {
      responseStatus: result.status ?? null,
      responseBody: result.body ?? null,
      error: result.error?.slice(0, 500) ?? null,
    };
    if (result.status !== undefined && result.status >= 200 && result.status < 300) {
      return this.settle(delivery, attempt, 'succeeded', answer);
    }
    if (result.status === 410) {
      const reason = 'The receiver answered 410 Gone';
      await this.tx.run(async () => {
        await this.repo.update(webhook.organizationId, webhook.id, {
          isActive: false,
          disabledReason: reason,
          updatedAt: this.clock.now(),
        });
        await this.announceChange(webhook.organizationId);
        await this.settle(delivery, attempt, 'failed', answer);
      });
      this.logger.warn({ webhookId: webhook.id }, 'Webhook disabled: its receiver answered 410');
      return;
    }
    if (attempt >= WEBHOOK_MAX_ATTEMPTS) return this.settle(delivery, attempt, 'failed', answer);
    const delay = result.retryAfterMs ?? outboxBackoffMs(WEBHOOK_BACKOFF_MS, attempt, WEBHOOK_BACKOFF_JITTER);
    await this.repo.updateDelivery(delivery.id, {
      ...answer,
      attempts: attempt,
      nextAttemptAt: new Date(this.clock.nowMs() + delay),
    });
    throw new OutboxRetry(answer.error ?? 'Delivery failed', delay);
  }

  private async settle(
    delivery: WebhookDeliveryRow,
    attempt: number,
    status: 'succeeded' | 'failed',
    answer: Partial<Pick<WebhookDeliveryRow, 'responseStatus' | 'responseBody' | 'error'>>,
  ): Promise<void> {
    await this.repo.updateDelivery(delivery.id, {
      ...answer,
      status,
      attempts: attempt,
      nextAttemptAt: null,
      completedAt: this.clock.now(),
    });
  }

  /** The secrets that sign now: the current one, and the previous one while its grace period lasts. */
  private secretsOf(webhook: WebhookRow): string[] {
    const secrets = [this.box.open(webhook.secretSealed)];
    if (
      webhook.previousSecretSealed &&
      webhook.previousSecretExpiresAt &&
      webhook.previousSecretExpiresAt.getTime() > this.clock.nowMs()
    ) {
      secrets.push(this.box.open(webhook.previousSecretSealed));
    }
    return secrets;
  }

  /** Deletes finished deliveries older than the events' retention. */
  async purge(): Promise<number> {
    const cutoff = new Date(this.clock.nowMs() - this.config.eventRetentionDays * 24 * 3600 * 1000);
    let total = 0;
    for (;;) {
      const batch = this.tx.db
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(and(lt(webhookDeliveries.createdAt, cutoff), ne(webhookDeliveries.status, 'pending')))
        .limit(PURGE_BATCH);
      const deleted = await this.tx.db
        .delete(webhookDeliveries)
        .where(inArray(webhookDeliveries.id, batch))
        .returning({ id: webhookDeliveries.id });
      total += deleted.length;
      if (deleted.length < PURGE_BATCH) return total;
    }
  }
}
