import { Injectable } from '@nestjs/common';
import { and, count, desc, eq, inArray, lt, ne, sql, type SQL } from 'drizzle-orm';
import {
  bulkInsert,
  deleteInBatches,
  type DomainEventRow,
  type PageRequest,
  pageWithTotal,
  type Query,
  TransactionHost,
} from '#platform';
import {
  type DeliveryStatus,
  webhookDeliveries,
  type WebhookDeliveryRow,
  webhooks,
  type WebhookRow,
} from './webhook.schema.js';

/** What to record of a delivery's attempt. */
export interface AttemptOutcome {
  deliveryId: string;
  status: DeliveryStatus;
  attempts: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  nextAttemptAt: Date | null;
  /** The receiver answered 410: the webhook is to be disabled. */
  gone: boolean;
}

/** A 24-hex id made in SQL (time in seconds, then 64 random bits), for the rows a statement creates. */
const sqlObjectId = sql`lpad(to_hex(floor(extract(epoch from clock_timestamp()))::bigint), 8, '0')
  || substr(md5(random()::text || clock_timestamp()::text), 1, 16)`;

/** A delivery created with its event (`eventDeliveriesQuery`), and what its first attempt needs of the webhook. */
export interface EventDelivery {
  deliveryId: string;
  outboxId: string;
  webhookId: string;
  organizationId: string;
  webhook: Pick<WebhookRow, 'url' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'>;
  eventId: string;
}

/** The webhooks and webhook_deliveries tables; every method takes the organization id. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(row: WebhookRow): Promise<WebhookRow> {
    const [inserted] = await this.tx.db.insert(webhooks).values(row).returning();
    return inserted!;
  }

  async count(organizationId: string): Promise<number> {
    const [row] = await this.tx.db
      .select({ n: count() })
      .from(webhooks)
      .where(eq(webhooks.organizationId, organizationId));
    return row?.n ?? 0;
  }

  async list(
    organizationId: string,
    agentScope: string[] | null,
    page: PageRequest,
  ): Promise<{ rows: WebhookRow[]; total: number }> {
    const conditions: SQL[] = [eq(webhooks.organizationId, organizationId)];
    if (agentScope) {
      conditions.push(sql`${webhooks.filterAgentId} = any(${sql.param(agentScope)}::text[])`);
    }
    const where = and(...conditions);
    return pageWithTotal(
      this.tx.db,
      webhooks,
      where,
      this.tx.db
        .select()
        .from(webhooks)
        .where(where)
        .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async find(organizationId: string, id: string): Promise<WebhookRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.organizationId, organizationId), eq(webhooks.id, id)))
      .limit(1);
    return row;
  }

  /**
   * Which of these organizations have an active webhook: read by the trace writer under the organizations' write
   * locks, which every webhook change also takes (it is audited), so the answer holds until its commit.
   */
  withActiveWebhooksQuery(organizationIds: readonly string[]): Query<ReadonlySet<string>> {
    return {
      statements: [
        sql`select distinct ${webhooks.organizationId} as organization_id from ${webhooks}
            where ${webhooks.organizationId} = any(${sql.param([...organizationIds])}::text[])
              and ${webhooks.isActive}`,
      ],
      read: ([rows]) => new Set(rows!.map((row) => String(row.organization_id))),
    };
  }

  /**
   * For the transaction that publishes these events (of any organizations): one statement that finds the active
   * webhooks each event is for (subscribed to its type, and of its agent if filtered), inserts their deliveries
   * (pending, next attempt at `leasedUntil`) and, through `firstAttempts`, the outbox messages of their first
   * attempts, selected from `source` (columns `id`, `organization_id`, `payload`: `{deliveryId}`); reads the
   * deliveries created.
   */
  eventDeliveriesQuery(
    events: readonly Pick<DomainEventRow, 'id' | 'organizationId' | 'type' | 'agentId'>[],
    leasedUntil: Date,
    now: Date,
    firstAttempts: (source: SQL) => SQL,
  ): Query<EventDelivery[]> {
    const statement = sql`with ev(id, organization_id, type, agent_id) as (
        select * from unnest(
          ${sql.param(events.map((e) => e.id))}::text[],
          ${sql.param(events.map((e) => e.organizationId))}::text[],
          ${sql.param(events.map((e) => e.type))}::text[],
          ${sql.param(events.map((e) => e.agentId))}::text[])
      ), matched as (
        select ${sqlObjectId} as delivery_id, ${sqlObjectId} as outbox_id, w.id as webhook_id, w.organization_id,
          w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at,
          ev.id as event_id, ev.type as event_type
        from ev join ${webhooks} w on w.organization_id = ev.organization_id and w.is_active
          and w.events @> to_jsonb(ev.type) and (w.filter_agent_id is null or w.filter_agent_id = ev.agent_id)
      ), deliveries as (
        insert into ${webhookDeliveries} (id, organization_id, webhook_id, event_id, event_type, status, attempts,
          next_attempt_at, created_at)
        select delivery_id, organization_id, webhook_id, event_id, event_type, 'pending', 0,
          ${leasedUntil.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz from matched
      ), attempts as (
        ${firstAttempts(
          sql`select outbox_id as id, organization_id, jsonb_build_object('deliveryId', delivery_id) as payload
            from matched`,
        )}
      )
      select delivery_id, outbox_id, webhook_id, organization_id, url, secret_sealed, previous_secret_sealed,
        previous_secret_expires_at, event_id from matched`;
    return {
      statements: [statement],
      read: ([rows]) =>
        rows!.map((r) => ({
          deliveryId: String(r.delivery_id),
          outboxId: String(r.outbox_id),
          webhookId: String(r.webhook_id),
          organizationId: String(r.organization_id),
          webhook: {
            url: String(r.url),
            secretSealed: String(r.secret_sealed),
            previousSecretSealed: r.previous_secret_sealed ? String(r.previous_secret_sealed) : null,
            previousSecretExpiresAt: r.previous_secret_expires_at
              ? new Date(r.previous_secret_expires_at as string)
              : null,
          },
          eventId: String(r.event_id),
        })),
    };
  }

  async update(
    organizationId: string,
    id: string,
    set: Partial<typeof webhooks.$inferInsert>,
  ): Promise<WebhookRow | undefined> {
    const [row] = await this.tx.db
      .update(webhooks)
      .set(set)
      .where(and(eq(webhooks.organizationId, organizationId), eq(webhooks.id, id)))
      .returning();
    return row;
  }

  /** Deletes the webhook with its deliveries. */
  async delete(organizationId: string, id: string): Promise<boolean> {
    await this.tx.db
      .delete(webhookDeliveries)
      .where(and(eq(webhookDeliveries.organizationId, organizationId), eq(webhookDeliveries.webhookId, id)));
    const deleted = await this.tx.db
      .delete(webhooks)
      .where(and(eq(webhooks.organizationId, organizationId), eq(webhooks.id, id)))
      .returning({ id: webhooks.id });
    return deleted.length > 0;
  }

  /** Inserts deliveries; one that repeats a (webhook, event) pair already delivered is skipped. Returns those inserted. */
  /**
   * A subject's erasure: the receivers' answers to deliveries of these events (a receiver may echo the body) are
   * removed; the deliveries' statuses and times stay.
   */
  async clearResponsesForEvents(organizationId: string, eventIds: readonly string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.tx.db
      .update(webhookDeliveries)
      .set({ responseBody: null })
      .where(
        and(
          eq(webhookDeliveries.organizationId, organizationId),
          inArray(webhookDeliveries.eventId, [...eventIds]),
        ),
      );
  }

  async insertDeliveries(rows: WebhookDeliveryRow[]): Promise<string[]> {
    if (rows.length === 0) return [];
    const inserted = await this.tx.db.execute(
      sql`${bulkInsert(webhookDeliveries, rows)} on conflict do nothing returning ${sql.raw('"id"')}`,
    );
    return (inserted as unknown as { rows: { id: string }[] }).rows.map((row) => row.id);
  }

  async deliveries(
    organizationId: string,
    webhookId: string,
    status: DeliveryStatus | undefined,
    page: PageRequest,
  ): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
    const conditions: SQL[] = [
      eq(webhookDeliveries.organizationId, organizationId),
      eq(webhookDeliveries.webhookId, webhookId),
    ];
    if (status) conditions.push(eq(webhookDeliveries.status, status));
    const where = and(...conditions);
    return pageWithTotal(
      this.tx.db,
      webhookDeliveries,
      where,
      this.tx.db
        .select()
        .from(webhookDeliveries)
        .where(where)
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async findDelivery(
    organizationId: string,
    webhookId: string,
    id: string,
  ): Promise<WebhookDeliveryRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.organizationId, organizationId),
          eq(webhookDeliveries.webhookId, webhookId),
          eq(webhookDeliveries.id, id),
        ),
      )
      .limit(1);
    return row;
  }

  /** A delivery with its webhook (the worker's read; the outbox message names the delivery only). */
  async deliveryForSend(
    id: string,
  ): Promise<{ delivery: WebhookDeliveryRow; webhook: WebhookRow | null } | undefined> {
    const [row] = await this.tx.db
      .select({ delivery: webhookDeliveries, webhook: webhooks })
      .from(webhookDeliveries)
      .leftJoin(
        webhooks,
        and(
          eq(webhooks.id, webhookDeliveries.webhookId),
          eq(webhooks.organizationId, webhookDeliveries.organizationId),
        ),
      )
      .where(eq(webhookDeliveries.id, id))
      .limit(1);
    return row;
  }

  /** Records attempts' outcomes on their deliveries, in one statement. */
  async recordOutcomes(outcomes: readonly AttemptOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await this.tx.db.execute(this.recordOutcomesSql(outcomes));
  }

  /** The statement of `recordOutcomes`, for a pipelined transaction. */
  recordOutcomesSql(outcomes: readonly AttemptOutcome[]): SQL {
    const d = webhookDeliveries;
    return sql`update ${d} set
        status = u.status,
        attempts = u.attempts::int,
        response_status = u.response_status::int,
        response_body = u.response_body,
        error = u.error,
        next_attempt_at = u.next_attempt_at::timestamptz,
        completed_at = case when u.status = 'pending' then null else clock_timestamp() end
      from unnest(
        ${sql.param(outcomes.map((o) => o.deliveryId))}::text[],
        ${sql.param(outcomes.map((o) => o.status))}::text[],
        ${sql.param(outcomes.map((o) => String(o.attempts)))}::text[],
        ${sql.param(outcomes.map((o) => (o.responseStatus === null ? null : String(o.responseStatus))))}::text[],
        ${sql.param(outcomes.map((o) => o.responseBody))}::text[],
        ${sql.param(outcomes.map((o) => o.error))}::text[],
        ${sql.param(outcomes.map((o) => o.nextAttemptAt?.toISOString() ?? null))}::text[]
      ) as u(id, status, attempts, response_status, response_body, error, next_attempt_at)
      where ${d.id} = u.id`;
  }

  /** Deletes finished deliveries (of every organization) created before `createdBefore`, `batch` at a time. */
  purgeFinished(createdBefore: Date, batch: number): Promise<number> {
    return deleteInBatches(
      this.tx.db,
      webhookDeliveries,
      webhookDeliveries.id,
      and(lt(webhookDeliveries.createdAt, createdBefore), ne(webhookDeliveries.status, 'pending')),
      batch,
    );
  }
}
