import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnModuleInit,
} from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  Clock,
  type DomainEventRow,
  DomainEvents,
  JobScheduler,
  Metrics,
  newId,
  Outbox,
  type OutboxDelivery,
  type OutboxOutcome,
  outboxBackoffMs,
  type OutboxRef,
  OutboxRetry,
  type Query,
  SecretBox,
  TransactionHost,
} from '#platform';
import type { Counter, Histogram } from 'prom-client';
import { type SendResult, sendWebhook } from './webhook-sender.js';
import { signWebhook } from './webhook-secret.js';
import type { WebhookDeliveryRow } from './webhook.schema.js';
import { type AttemptOutcome, type EventDelivery, WebhooksRepository } from './webhooks.repository.js';

/**
 * Attempts of one delivery at most, and the pauses between them (about 30 s, 2 min, 10 min, 1 h, 6 h:
 * docs/dashboard-developers.md, "Review, approval patterns, webhooks and the event stream";
 * test/webhooks-delivery.e2e-spec.ts).
 */
export const WEBHOOK_MAX_ATTEMPTS = 6;
export const WEBHOOK_BACKOFF_MS = [30_000, 120_000, 600_000, 3_600_000, 21_600_000] as const;
export const WEBHOOK_BACKOFF_JITTER = 0.2;
/** HTTP attempts running at once in this process at most; the others wait their turn. */
export const WEBHOOK_SEND_CONCURRENCY = 32;
/** Outcomes of first attempts are written together, at most this many per statement. */
const OUTCOME_BATCH = 200;
/** Outcomes wait this long to be written with others. */
const OUTCOME_DELAY_MS = 20;
/** A delivery's first attempt is leased this long to the process that committed it. */
const FIRST_ATTEMPT_LEASE_MS = 60_000;
const PURGE_INTERVAL_MS = 3600 * 1000;
const PURGE_BATCH = 5000;
/** Seconds from an event to its receiver's 2xx: a first attempt's fraction of a second up to an hour of retries. */
const DELIVERY_LAG_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600, 1800, 3600];

/** What an attempt needs of a webhook. */
type Signer = EventDelivery['webhook'];

/** A delivery created with its event, and its first attempt's outbox message, leased to this process. */
interface FirstAttempt {
  deliveryId: string;
  outboxId: string;
  webhookId: string;
  organizationId: string;
  webhook: Signer;
  event: DomainEventRow;
}

interface RecordedOutcome {
  outboxId: string;
  organizationId: string;
  webhookId: string;
  outcome: AttemptOutcome;
}

/**
 * Webhook delivery. Deliveries are created in the transaction that publishes their event, by one statement that
 * finds the webhooks each event is for, with their first attempts as outbox messages leased to the committing
 * process; that process runs them right after the commit, from memory, and writes their outcomes in batches. Every
 * later attempt (a retry, and the first attempt of a test send or a redelivery) is run by the outbox, whose retry
 * pass claims due messages with FOR UPDATE SKIP LOCKED and leases each, so no two replicas send one attempt twice.
 * An attempt signs the body per Standard Webhooks with the current secret (and the previous one during a grace
 * period) and posts it through the SSRF guard.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: WEBHOOK_SEND_CONCURRENCY }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: WEBHOOK_SEND_CONCURRENCY }),
  };
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private outcomes: RecordedOutcome[] = [];
  private flushing: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly deliveryLag: Histogram;
  private readonly disabledByGone: Counter;

  constructor(
    private readonly repo: WebhooksRepository,
    private readonly outbox: Outbox,
    private readonly events: DomainEvents,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly tx: TransactionHost,
    private readonly scheduler: JobScheduler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    metrics: Metrics,
  ) {
    this.deliveryLag = metrics.histogram({
      name: 'governance_webhook_delivery_lag_seconds',
      help: "From an event's commit to a 2xx from the webhook's receiver (redeliveries excepted)",
      buckets: DELIVERY_LAG_BUCKETS,
    });
    this.disabledByGone = metrics.counter({
      name: 'governance_webhooks_disabled_total',
      help: 'Webhooks disabled because their receiver answered 410 Gone',
    });
  }

  onModuleInit(): void {
    this.events.consume({
      interestQuery: (organizationIds) => this.repo.withActiveWebhooksQuery(organizationIds),
      plan: (events, interested) => this.plan(events, interested),
    });
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
      mode: 'once-per-period',
      run: () => this.purge(),
    });
  }

  /** First attempts under way finish, and are recorded, before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
    await this.flush();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** A new delivery row, pending, of an event to a webhook (test sends and redeliveries). */
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
   * Inserts deliveries and their first attempts (outbox messages) in the current transaction; returns the ids
   * inserted and their attempts, which the caller runs once committed (`outbox.dispatch`), to wait for the first.
   */
  async schedule(rows: WebhookDeliveryRow[]): Promise<{ ids: string[]; attempts: OutboxRef[] }> {
    const ids = await this.repo.insertDeliveries(rows);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const { query, pending } = this.outbox.enqueueQuery(
      'webhook.deliver',
      ids.map((deliveryId) => ({
        organizationId: byId.get(deliveryId)!.organizationId,
        payload: { deliveryId },
      })),
    );
    await this.tx.query(query);
    return { ids, attempts: pending };
  }

  /**
   * The consumer of events: one statement in the publishing transaction finds the active webhooks each event is for
   * (subscribed to its type, and of its agent if filtered), creates their deliveries and the first attempts' outbox
   * messages, leased to this process, and returns them. After the commit this process runs those attempts from
   * memory; if it dies first, the lease expires and the outbox's retry pass runs them.
   */
  private plan(
    events: readonly DomainEventRow[],
    interested?: ReadonlySet<string>,
  ): Query<() => void> | null {
    const candidates = events.filter(
      (event) => event.type !== 'webhook.test' && (!interested || interested.has(event.organizationId)),
    );
    if (candidates.length === 0) return null;
    const now = this.clock.now();
    const leasedUntil = new Date(now.getTime() + FIRST_ATTEMPT_LEASE_MS);
    const byId = new Map(candidates.map((event) => [event.id, event]));
    const query = this.repo.eventDeliveriesQuery(candidates, leasedUntil, now, (source) =>
      this.outbox.leasedInsertSql('webhook.deliver', source, leasedUntil, now),
    );
    return {
      statements: query.statements,
      read: (results) => {
        const firsts: FirstAttempt[] = query.read(results).map(({ eventId, ...delivery }) => ({
          ...delivery,
          event: byId.get(eventId)!,
        }));
        return () => {
          for (const first of firsts) this.track(this.runFirst(first));
        };
      },
    };
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /** A first attempt, from memory; its outcome is written with others'. */
  private async runFirst(first: FirstAttempt): Promise<void> {
    try {
      const result = await this.send(first.webhook, first.event);
      this.observeLag(first.event, result);
      this.outcomes.push({
        outboxId: first.outboxId,
        organizationId: first.organizationId,
        webhookId: first.webhookId,
        outcome: this.outcomeOf(first.deliveryId, 1, result),
      });
      await this.flush();
    } catch (err) {
      this.logger.warn(
        { err, deliveryId: first.deliveryId },
        'A first webhook attempt could not run; the retry pass will',
      );
    }
  }

  /**
   * Writes the outcomes collected so far, deliveries and outbox messages in one transaction of one round trip, one
   * batch at a time: outcomes that arrive meanwhile (or within OUTCOME_DELAY_MS) go together in the next.
   */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      await new Promise((r) => setTimeout(r, OUTCOME_DELAY_MS));
      while (this.outcomes.length > 0) {
        const batch = this.outcomes.splice(0, OUTCOME_BATCH);
        try {
          const attempts: OutboxOutcome[] = batch.map(({ outboxId, outcome }) => ({
            id: outboxId,
            status: outcome.status === 'pending' ? 'pending' : 'sent',
            nextAttemptAt: outcome.nextAttemptAt ?? undefined,
            error: outcome.error ?? undefined,
          }));
          await this.tx.pipelined((send) =>
            send(
              [
                this.repo.recordOutcomesSql(batch.map((b) => b.outcome)),
                this.outbox.recordOutcomesSql(attempts),
              ],
              { commit: true },
            ),
          );
          this.outbox.countAttempts('webhook.deliver', attempts);
          for (const { organizationId, webhookId, outcome } of batch) {
            if (!outcome.gone) continue;
            await this.disable(organizationId, webhookId);
            this.disabledByGone.inc();
          }
        } catch (err) {
          this.logger.warn(
            { err },
            'Webhook outcomes could not be recorded; the retry pass will attempt them again',
          );
        }
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async disable(organizationId: string, webhookId: string): Promise<void> {
    await this.repo.update(organizationId, webhookId, {
      isActive: false,
      disabledReason: 'The receiver answered 410 Gone',
      updatedAt: this.clock.now(),
    });
    this.logger.warn({ webhookId }, 'Webhook disabled: its receiver answered 410');
  }

  /**
   * An attempt run by the outbox (a retry, or the first attempt of a test send or a redelivery): reads the delivery,
   * its webhook and its event, sends, and records the outcome; a failure to retry goes back to the outbox with its
   * delay (the backoff, or the receiver's Retry-After).
   */
  private async attempt(message: OutboxDelivery<'webhook.deliver'>): Promise<void> {
    const found = await this.repo.deliveryForSend(message.payload.deliveryId);
    if (!found || found.delivery.status !== 'pending') return;
    const { delivery, webhook } = found;
    const attempt = message.attempt;
    const end = (error: string) =>
      this.repo.recordOutcomes([
        {
          deliveryId: delivery.id,
          status: 'failed',
          attempts: attempt,
          responseStatus: null,
          responseBody: null,
          error,
          nextAttemptAt: null,
          gone: false,
        },
      ]);
    if (!webhook?.isActive) return end('The webhook is disabled or deleted');
    const event = await this.events.get(delivery.organizationId, delivery.eventId);
    if (!event) return end('The event is no longer kept');
    const result = await this.send(webhook, event);
    // A redelivery is an operator's resend of an old event: its age says nothing of the delivery pipeline.
    if (!delivery.redeliveryOf) this.observeLag(event, result);
    const outcome = this.outcomeOf(delivery.id, attempt, result);
    await this.tx.run(async () => {
      await this.repo.recordOutcomes([outcome]);
      if (outcome.gone) await this.disable(webhook.organizationId, webhook.id);
    });
    if (outcome.gone) this.disabledByGone.inc();
    if (outcome.status === 'pending') {
      throw new OutboxRetry(
        outcome.error ?? 'Delivery failed',
        outcome.nextAttemptAt!.getTime() - this.clock.nowMs(),
      );
    }
  }

  /** Signs and posts an event, at most WEBHOOK_SEND_CONCURRENCY at once in this process. */
  private async send(webhook: Signer, event: DomainEventRow): Promise<SendResult> {
    if (this.running >= WEBHOOK_SEND_CONCURRENCY) await new Promise<void>((r) => this.waiting.push(r));
    this.running += 1;
    try {
      const body = JSON.stringify({
        type: event.type,
        timestamp: event.createdAt.toISOString(),
        data: event.data,
      });
      const timestamp = Math.floor(this.clock.nowMs() / 1000);
      return await sendWebhook(
        webhook.url,
        body,
        {
          'webhook-id': event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': this.secretsOf(webhook)
            .map((secret) => signWebhook(secret, event.id, timestamp, body))
            .join(' '),
        },
        {
          allowPrivate: this.config.webhookAllowPrivateNetworks,
          nowMs: this.clock.nowMs(),
          agents: this.agents,
        },
      );
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }

  /** A 2xx: the time from the event's commit (its creation, in its transaction) to now. */
  private observeLag(event: DomainEventRow, result: SendResult): void {
    if (result.status === undefined || result.status < 200 || result.status >= 300) return;
    this.deliveryLag.observe(Math.max(0, this.clock.nowMs() - event.createdAt.getTime()) / 1000);
  }

  /** What an attempt's result means for its delivery: success, 410, a retry after its delay, or the end. */
  private outcomeOf(deliveryId: string, attempt: number, result: SendResult): AttemptOutcome {
    const answer = {
      deliveryId,
      attempts: attempt,
      responseStatus: result.status ?? null,
      responseBody: result.body ?? null,
      error: result.error?.slice(0, 500) ?? null,
      gone: false,
    };
    if (result.status !== undefined && result.status >= 200 && result.status < 300) {
      return { ...answer, status: 'succeeded', nextAttemptAt: null };
    }
    if (result.status === 410) return { ...answer, status: 'failed', nextAttemptAt: null, gone: true };
    if (attempt >= WEBHOOK_MAX_ATTEMPTS) return { ...answer, status: 'failed', nextAttemptAt: null };
    const delay = result.retryAfterMs ?? outboxBackoffMs(WEBHOOK_BACKOFF_MS, attempt, WEBHOOK_BACKOFF_JITTER);
    return { ...answer, status: 'pending', nextAttemptAt: new Date(this.clock.nowMs() + delay) };
  }

  /** The secrets that sign now: the current one, and the previous one while its grace period lasts. */
  private secretsOf(webhook: Signer): string[] {
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
    return this.repo.purgeFinished(cutoff, PURGE_BATCH);
  }
}
