import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { and, asc, eq, gt, gte, inArray, lt, or } from 'drizzle-orm';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';
import { bulkInsert } from '../db/bulk-insert.js';
import { DATABASE, type DatabaseHandle } from '../db/database.js';
import { type Query, writeQuery } from '../db/query.js';
import { TransactionHost } from '../db/transaction-host.js';
import { newId } from '../ids/object-id.js';
import { NotificationBus } from '../notifications/notification-bus.js';
import { Outbox, type OutboxRef } from '../outbox/outbox.js';
import { JobScheduler } from '../scheduler/job-scheduler.js';
import { domainEvents, type DomainEventRow } from './domain-event.schema.js';

export type { DomainEventRow } from './domain-event.schema.js';

/** An event to publish with the change that causes it. */
export interface NewDomainEvent {
  organizationId: string;
  /** A webhook event name (`trace.flagged`, `review.completed`, ...). */
  type: string;
  /** The agent concerned, if any: webhooks with `filterAgentId` receive only that agent's events. */
  agentId?: string | null;
  data: Record<string, unknown>;
}

/**
 * Consumes committed events inside the fan-out's transaction (the webhooks module creates its deliveries there). It
 * may see an event twice if a fan-out is retried, so it must be idempotent.
 */
export type DomainEventConsumer = (events: readonly DomainEventRow[]) => Promise<void>;

/** Every replica hears `{organizationId, ids}` on this channel once the events' fan-out has run. */
export const DOMAIN_EVENTS_CHANNEL = 'domain_events';

export interface DomainEventsNotice {
  organizationId: string;
  ids: string[];
}

/** Event ids per fan-out message, and per notification (a NOTIFY payload is under 8,000 bytes). */
const FANOUT_CHUNK = 250;
const NOTICE_CHUNK = 200;
const PURGE_BATCH = 5000;
const PURGE_INTERVAL_MS = 3600 * 1000;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Domain events: written in the transaction of the change (`publish`, or `publishQuery` for a pipelined one),
 * together with an outbox message `events.fanout`. After the commit, the fan-out hands them to the consumers (webhook
 * deliveries, in one transaction) and announces them on the notification bus, which every replica's event stream
 * hears. A rolled-back change publishes nothing; a committed one is fanned out even across a crash, by the outbox's
 * retry pass. Events are kept EVENT_RETENTION_DAYS for replay and the delivery log, then purged.
 */
@Injectable()
export class DomainEvents implements OnModuleInit {
  private readonly logger = new Logger('DomainEvents');
  private readonly consumers: DomainEventConsumer[] = [];
  private readonly bus: NotificationBus;

  constructor(
    private readonly tx: TransactionHost,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly scheduler: JobScheduler,
    @Inject(DATABASE) handle: DatabaseHandle,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'eventRetentionDays'>,
  ) {
    this.bus = NotificationBus.of(handle);
  }

  onModuleInit(): void {
    this.outbox.handle('events.fanout', {
      deliver: (message) => this.fanOut(message.payload.ids),
      maxAttempts: 30,
      backoffMs: [1000, 5000, 30_000, 120_000, 600_000],
      leaseMs: 60_000,
    });
    this.scheduler.register({ name: 'events-purge', intervalMs: PURGE_INTERVAL_MS, run: () => this.purge() });
  }

  /** Registers a consumer of committed events (at module initialisation). */
  consume(consumer: DomainEventConsumer): void {
    this.consumers.push(consumer);
  }

  /** Publishes events in the current transaction (or one of its own): they exist if and only if it commits. */
  async publish(events: readonly NewDomainEvent[]): Promise<DomainEventRow[]> {
    if (events.length === 0) return [];
    const { rows, query, pending } = this.publishQuery(events);
    await this.tx.run(async () => {
      await this.tx.query(query);
      this.tx.afterCommit(() => this.outbox.dispatch(pending));
    });
    return rows;
  }

  /**
   * For a pipelined transaction: the inserts of these events and of their fan-out messages. Call
   * `outbox.dispatch(pending)` once it has committed.
   */
  publishQuery(events: readonly NewDomainEvent[]): {
    rows: DomainEventRow[];
    query: Query<void>;
    pending: OutboxRef[];
  } {
    if (events.length === 0) return { rows: [], query: writeQuery(), pending: [] };
    const now = this.clock.now();
    const rows: DomainEventRow[] = events.map((event) => ({
      id: newId(now.getTime()),
      organizationId: event.organizationId,
      type: event.type,
      agentId: event.agentId ?? null,
      data: event.data,
      createdAt: now,
    }));
    const fanout = this.outbox.enqueueQuery(
      'events.fanout',
      chunks(rows, FANOUT_CHUNK).map((chunk) => ({ payload: { ids: chunk.map((row) => row.id) } })),
    );
    return {
      rows,
      query: {
        statements: [bulkInsert(domainEvents, rows), ...fanout.query.statements],
        read: () => undefined,
      },
      pending: fanout.pending,
    };
  }

  /** The events of an organization with these ids, oldest first. */
  byIds(organizationId: string, ids: readonly string[]): Promise<DomainEventRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.tx.db
      .select()
      .from(domainEvents)
      .where(and(eq(domainEvents.organizationId, organizationId), inArray(domainEvents.id, [...ids])))
      .orderBy(asc(domainEvents.createdAt), asc(domainEvents.id));
  }

  /** One event of an organization. */
  async get(organizationId: string, id: string): Promise<DomainEventRow | null> {
    const [row] = await this.byIds(organizationId, [id]);
    return row ?? null;
  }

  /**
   * The replay after a reconnect: the organization's events after `afterId` (by time, then id), no older than
   * `since`, oldest first, at most `limit`. An id the organization does not have replays nothing.
   */
  async after(
    organizationId: string,
    afterId: string,
    since: Date,
    limit: number,
  ): Promise<DomainEventRow[]> {
    const last = await this.get(organizationId, afterId);
    if (!last) return [];
    return this.tx.db
      .select()
      .from(domainEvents)
      .where(
        and(
          eq(domainEvents.organizationId, organizationId),
          gte(domainEvents.createdAt, since),
          or(
            gt(domainEvents.createdAt, last.createdAt),
            and(eq(domainEvents.createdAt, last.createdAt), gt(domainEvents.id, last.id)),
          ),
        ),
      )
      .orderBy(asc(domainEvents.createdAt), asc(domainEvents.id))
      .limit(limit);
  }

  /** Deletes events older than the retention period, in batches; returns how many. */
  async purge(): Promise<number> {
    const cutoff = new Date(this.clock.nowMs() - this.config.eventRetentionDays * 24 * 3600 * 1000);
    let total = 0;
    for (;;) {
      const batch = this.tx.db
        .select({ id: domainEvents.id })
        .from(domainEvents)
        .where(lt(domainEvents.createdAt, cutoff))
        .limit(PURGE_BATCH);
      const deleted = await this.tx.db
        .delete(domainEvents)
        .where(inArray(domainEvents.id, batch))
        .returning({ id: domainEvents.id });
      total += deleted.length;
      if (deleted.length < PURGE_BATCH) return total;
    }
  }

  /** Hands committed events to the consumers and announces them to every replica, in one transaction. */
  private async fanOut(ids: readonly string[]): Promise<void> {
    const rows = await this.tx.db
      .select()
      .from(domainEvents)
      .where(inArray(domainEvents.id, [...ids]))
      .orderBy(asc(domainEvents.createdAt), asc(domainEvents.id));
    if (rows.length === 0) return;
    await this.tx.run(async () => {
      for (const consumer of this.consumers) await consumer(rows);
      const byOrganization = new Map<string, string[]>();
      for (const row of rows) {
        const list = byOrganization.get(row.organizationId) ?? [];
        list.push(row.id);
        byOrganization.set(row.organizationId, list);
      }
      for (const [organizationId, list] of byOrganization) {
        for (const chunk of chunks(list, NOTICE_CHUNK)) {
          const notice: DomainEventsNotice = { organizationId, ids: chunk };
          await this.bus.notify(this.tx, DOMAIN_EVENTS_CHANNEL, JSON.stringify(notice));
        }
      }
    });
    this.logger.debug({ events: rows.length }, 'Domain events fanned out');
  }
}
