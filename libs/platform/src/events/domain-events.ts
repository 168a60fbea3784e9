import { randomBytes } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';
import { DATABASE, type DatabaseHandle } from '../db/database.js';
import type { Query } from '../db/query.js';
import { TransactionHost } from '../db/transaction-host.js';
import { newId } from '../ids/object-id.js';
import { NotificationBus } from '../notifications/notification-bus.js';
import { JobScheduler } from '../scheduler/job-scheduler.js';
import type { AuditEntryRow } from '../audit/audit.schema.js';
import { AuditLog } from '../audit/audit-log.js';
import { AuditLogRepository } from '../audit/audit-log.repository.js';
import type { DomainEventRow } from './domain-event.schema.js';
import { DomainEventsRepository } from './domain-events.repository.js';

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
 * Turns an audit entry into the event that announces it. Registered for audit event types whose entries are
 * themselves the events (`announcesAudit`): such an event takes the entry's id and time and is not stored twice.
 */
export type AuditAnnouncement = (entry: AuditEntryRow) => Omit<NewDomainEvent, 'organizationId'>;

/**
 * A consumer of events (the webhooks module): given the events about to be written, a query that must commit with
 * them (its deliveries and their first attempts, computed in SQL from its own tables), whose result says what to do
 * once the transaction has committed (send those attempts). Synchronous: it reads nothing before the transaction.
 */
export interface DomainEventPlanner {
  /**
   * For a pipelined transaction that takes the organizations' write locks first: which of these organizations
   * the consumer has anything for (its subscriptions), read under those locks, so that `plan` can skip the others.
   */
  interestQuery?(organizationIds: readonly string[]): Query<ReadonlySet<string>>;
  /** `interested`: what `interestQuery` read, if it ran in the same transaction (else every organization counts). */
  plan(events: readonly DomainEventRow[], interested?: ReadonlySet<string>): Query<() => void> | null;
}

/** What the consumers' interest queries read, for `prepare`. */
export type DomainEventInterest = ReadonlyMap<DomainEventPlanner, ReadonlySet<string>>;

/** Every replica hears `{organizationId, ids}` on this channel when events commit (the event stream). */
export const DOMAIN_EVENTS_CHANNEL = 'domain_events';
/** Ids of stored events whose data changed (a subject's erasure): every process drops them from its recent events. */
export const DOMAIN_EVENTS_CHANGED_CHANNEL = 'domain_events_changed';
/** Event ids per notification of a change: a NOTIFY payload holds 8,000 bytes at most. */
const CHANGED_IDS_PER_NOTICE = 250;

export interface DomainEventsNotice {
  organizationId: string;
  ids: string[];
  /** The publishing process (`DomainEvents.origin`): it hears its own notices right after its commit already. */
  origin: string;
}

/** Events this process committed last, kept to answer its own streams without a query. */
const RECENT_MAX = 5000;
/** Event ids per notification (a NOTIFY payload is under 8,000 bytes). */
const NOTICE_CHUNK = 200;
const PURGE_BATCH = 5000;
const PURGE_INTERVAL_MS = 3600 * 1000;

const byTimeThenId = (a: DomainEventRow, b: DomainEventRow) =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * A prepared publication: its rows, and the query to send in its transaction, which reads into what to call once
 * the transaction has committed.
 */
export interface DomainEventPublication {
  rows: DomainEventRow[];
  query: Query<() => void>;
}

/**
 * Domain events, written in the transaction of the change that causes them (`publish`, or `prepare` for a pipelined
 * one) together with what their consumers need to commit with them: the webhook deliveries and their first
 * attempts as outbox messages, and a NOTIFY that tells every replica's event stream. A rolled-back change publishes
 * nothing; a committed one has its deliveries whatever happens to the process next (the outbox's retry pass sends
 * them). Events are kept EVENT_RETENTION_DAYS for the stream's replay and the delivery log, then purged.
 */
@Injectable()
export class DomainEvents implements OnModuleInit {
  private readonly planners: DomainEventPlanner[] = [];
  /** This process, in the notices it publishes. */
  readonly origin = randomBytes(8).toString('hex');
  /** Audit event types whose entries are events, and how each becomes one. */
  private readonly announcements = new Map<string, AuditAnnouncement>();
  /** Recently committed events of this process, oldest first (Map order). */
  private readonly recent = new Map<string, DomainEventRow>();
  private readonly bus: NotificationBus;
  /** Whether this process hears the changes of stored events (from its first remembered event on). */
  private hearsChanges = false;

  constructor(
    private readonly tx: TransactionHost,
    private readonly repo: DomainEventsRepository,
    private readonly clock: Clock,
    private readonly scheduler: JobScheduler,
    private readonly audit: AuditLog,
    private readonly auditRows: AuditLogRepository,
    @Inject(DATABASE) handle: DatabaseHandle,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'eventRetentionDays'>,
  ) {
    this.bus = NotificationBus.of(handle);
  }

  onModuleInit(): void {
    this.scheduler.register({
      name: 'events-purge',
      intervalMs: PURGE_INTERVAL_MS,
      mode: 'once-per-period',
      run: () => this.purge(),
    });
  }

  /**
   * Declares that the audit entries of these types are events (at module initialisation): the trace writer's
   * entries, one per trace, would otherwise be written twice. `fromAudit` makes the event of an entry; reads
   * (`byIds`, `after`) find such events in the audit log, within the retention period like the others.
   */
  announcesAudit(eventTypes: readonly string[], announce: AuditAnnouncement): void {
    for (const type of eventTypes) this.announcements.set(type, announce);
  }

  /**
   * A subject's erasure: these members (free text that may quote the content) leave the stored events about these
   * traces, so that the stream's replay and a webhook's redelivery no longer carry them. Returns the events changed.
   */
  async stripForTraces(
    organizationId: string,
    traceIds: readonly string[],
    members: readonly string[],
  ): Promise<string[]> {
    const ids = await this.repo.stripForTraces(organizationId, traceIds, members);
    // Every process (this one after the commit) forgets its copies, which would otherwise still be sent.
    for (let i = 0; i < ids.length; i += CHANGED_IDS_PER_NOTICE) {
      const notice = JSON.stringify(ids.slice(i, i + CHANGED_IDS_PER_NOTICE));
      await this.bus.notify(this.tx, DOMAIN_EVENTS_CHANGED_CHANNEL, notice);
    }
    return ids;
  }

  /**
   * Listens for changed events, once: their copies among the recent events are dropped. While the listener is
   * lost, changes of other replicas go unheard, so the recent events are all dropped (they are read again).
   */
  private hearChanges(): void {
    if (this.hearsChanges) return;
    this.hearsChanges = true;
    this.bus
      .subscribe(DOMAIN_EVENTS_CHANGED_CHANNEL, {
        onMessage: (payload) => {
          for (const id of JSON.parse(payload) as string[]) this.recent.delete(id);
        },
        onListening: (listening) => {
          if (!listening) this.recent.clear();
        },
      })
      .catch(() => {
        this.hearsChanges = false;
        this.recent.clear();
      });
  }

  /** The event an audit entry announces (see `announcesAudit`), or null when its type announces none. */
  fromAudit(entry: AuditEntryRow): DomainEventRow | null {
    const announce = this.announcements.get(entry.eventType);
    if (!announce) return null;
    const event = announce(entry);
    return {
      id: entry.id,
      organizationId: entry.organizationId,
      type: event.type,
      agentId: event.agentId ?? null,
      data: event.data,
      createdAt: entry.createdAt,
    };
  }

  /**
   * For a pipelined transaction holding the organizations' write locks: the consumers' interest in these
   * organizations, to pass to `prepare` (a consumer with nothing for a batch's organizations adds no statement).
   */
  interestQuery(organizationIds: readonly string[]): Query<DomainEventInterest> {
    const queries = this.planners.flatMap((planner) =>
      planner.interestQuery ? [{ planner, query: planner.interestQuery(organizationIds) }] : [],
    );
    return {
      statements: queries.flatMap(({ query }) => query.statements),
      read: (results) => {
        const interest = new Map<DomainEventPlanner, ReadonlySet<string>>();
        let offset = 0;
        for (const { planner, query } of queries) {
          interest.set(planner, query.read(results.slice(offset, offset + query.statements.length)));
          offset += query.statements.length;
        }
        return interest;
      },
    };
  }

  /** Registers a consumer (at module initialisation). */
  consume(planner: DomainEventPlanner): void {
    this.planners.push(planner);
  }

  /** Publishes events in the current transaction (or one of its own): they exist if and only if it commits. */
  async publish(events: readonly NewDomainEvent[]): Promise<DomainEventRow[]> {
    if (events.length === 0) return [];
    const publication = this.prepare(events);
    await this.tx.run(async () => {
      this.tx.afterCommit(await this.tx.query(publication.query));
    });
    return publication.rows;
  }

  /**
   * For a pipelined transaction: the events' rows, the statements to send with the transaction's last round trip,
   * and what to call once it has committed. `announced` are the events of audit entries the same transaction writes
   * (`fromAudit`): published, not stored again.
   */
  prepare(
    events: readonly NewDomainEvent[],
    announced: readonly DomainEventRow[] = [],
    interest?: DomainEventInterest,
  ): DomainEventPublication {
    const nothing = () => undefined;
    if (events.length === 0 && announced.length === 0) {
      return { rows: [], query: { statements: [], read: () => nothing } };
    }
    const now = this.clock.now();
    const stored: DomainEventRow[] = events.map((event) => ({
      id: newId(now.getTime()),
      organizationId: event.organizationId,
      type: event.type,
      agentId: event.agentId ?? null,
      data: event.data,
      createdAt: now,
    }));
    const rows = [...announced, ...stored];
    const queries: Query<(() => void) | void>[] = stored.length > 0 ? [this.repo.insertQuery(stored)] : [];
    for (const planner of this.planners) {
      const query = planner.plan(rows, interest?.get(planner));
      if (query) queries.push(query);
    }
    const byOrganization = new Map<string, string[]>();
    for (const row of rows) {
      const list = byOrganization.get(row.organizationId) ?? [];
      list.push(row.id);
      byOrganization.set(row.organizationId, list);
    }
    for (const [organizationId, ids] of byOrganization) {
      for (const chunk of chunks(ids, NOTICE_CHUNK)) {
        const notice: DomainEventsNotice = { organizationId, ids: chunk, origin: this.origin };
        const notify = this.bus.notifyQuery(DOMAIN_EVENTS_CHANNEL, JSON.stringify(notice));
        queries.push({ statements: notify.statements, read: () => notify.afterCommit });
      }
    }
    return {
      rows,
      query: {
        statements: queries.flatMap((q) => q.statements),
        read: (results) => {
          const callbacks: (() => void)[] = [];
          let offset = 0;
          for (const q of queries) {
            const callback = q.read(results.slice(offset, offset + q.statements.length));
            offset += q.statements.length;
            if (callback) callbacks.push(callback);
          }
          return () => {
            this.remember(rows);
            for (const callback of callbacks) callback();
          };
        },
      },
    };
  }

  private remember(rows: readonly DomainEventRow[]): void {
    if (rows.length > 0) this.hearChanges();
    for (const row of rows) this.recent.set(row.id, row);
    for (const id of this.recent.keys()) {
      if (this.recent.size <= RECENT_MAX) break;
      this.recent.delete(id);
    }
  }

  /**
   * The events of an organization with these ids, oldest first: those this process committed lately from memory,
   * the others (another replica's) from the database.
   */
  async byIds(organizationId: string, ids: readonly string[]): Promise<DomainEventRow[]> {
    if (ids.length === 0) return [];
    const found: DomainEventRow[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const row = this.recent.get(id);
      if (row?.organizationId === organizationId) found.push(row);
      else if (!row) missing.push(id);
    }
    if (missing.length > 0) {
      found.push(...(await this.repo.byIds(organizationId, missing)));
      if (found.length < ids.length && this.announcements.size > 0) {
        // By primary key only, then checked here: the organization's other indexes are no use for a few ids.
        const cutoff = this.retentionCutoff().getTime();
        const entries = await this.audit.byIds(missing);
        for (const entry of entries) {
          if (entry.organizationId !== organizationId || entry.createdAt.getTime() < cutoff) continue;
          const event = this.fromAudit(entry);
          if (event) found.push(event);
        }
      }
    }
    return found.sort(byTimeThenId);
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
    const from = since.getTime() > this.retentionCutoff().getTime() ? since : this.retentionCutoff();
    const stored = await this.repo.after(organizationId, from, last, limit);
    const announced =
      this.announcements.size === 0
        ? []
        : (
            await this.auditRows.entriesAfter(
              organizationId,
              [...this.announcements.keys()],
              from,
              last,
              limit,
            )
          ).flatMap((entry) => this.fromAudit(entry) ?? []);
    return [...stored, ...announced].sort(byTimeThenId).slice(0, limit);
  }

  /** Events older than this are gone: purged from domain_events, and no longer read from the audit log. */
  private retentionCutoff(): Date {
    return new Date(this.clock.nowMs() - this.config.eventRetentionDays * 24 * 3600 * 1000);
  }

  /** Deletes events older than the retention period, in batches; returns how many. */
  async purge(): Promise<number> {
    const cutoffSeconds = Math.floor(
      (this.clock.nowMs() - this.config.eventRetentionDays * 24 * 3600 * 1000) / 1000,
    );
    // Ids begin with their creation time (8 hex digits of seconds): the primary key orders them by age.
    const cutoffId = cutoffSeconds.toString(16).padStart(8, '0');
    return this.repo.purgeBefore(cutoffId, PURGE_BATCH);
  }
}
