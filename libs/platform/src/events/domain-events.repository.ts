import { Injectable } from '@nestjs/common';
import { and, asc, eq, gt, gte, inArray, lt, or, sql } from 'drizzle-orm';
import { bulkInsert } from '../db/bulk-insert.js';
import { deleteInBatches } from '../db/delete-in-batches.js';
import { type Query, writeQuery } from '../db/query.js';
import { TransactionHost } from '../db/transaction-host.js';
import { domainEvents, type DomainEventRow } from './domain-event.schema.js';

/** The domain_events table; every read takes the organization id first. */
@Injectable()
export class DomainEventsRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** The insert of these events, for a pipelined transaction. */
  insertQuery(rows: DomainEventRow[]): Query<void> {
    return writeQuery(bulkInsert(domainEvents, rows));
  }

  /** The organization's stored events with these ids, in no order. */
  byIds(organizationId: string, ids: string[]): Promise<DomainEventRow[]> {
    return this.tx.db
      .select()
      .from(domainEvents)
      .where(and(eq(domainEvents.organizationId, organizationId), inArray(domainEvents.id, ids)));
  }

  /**
   * The organization's stored events from `from` on, after `after` (by time, then id), oldest first, at most
   * `limit`.
   */
  after(
    organizationId: string,
    from: Date,
    after: Pick<DomainEventRow, 'createdAt' | 'id'>,
    limit: number,
  ): Promise<DomainEventRow[]> {
    return this.tx.db
      .select()
      .from(domainEvents)
      .where(
        and(
          eq(domainEvents.organizationId, organizationId),
          gte(domainEvents.createdAt, from),
          or(
            gt(domainEvents.createdAt, after.createdAt),
            and(eq(domainEvents.createdAt, after.createdAt), gt(domainEvents.id, after.id)),
          ),
        ),
      )
      .orderBy(asc(domainEvents.createdAt), asc(domainEvents.id))
      .limit(limit);
  }

  /**
   * Removes these members from the data of the organization's stored events about these traces (`data.traceId`)
   * that hold any of them; returns the events changed. The events are kept EVENT_RETENTION_DAYS, so the scan is of a few days' events.
   */
  async stripForTraces(
    organizationId: string,
    traceIds: readonly string[],
    members: readonly string[],
  ): Promise<string[]> {
    if (traceIds.length === 0) return [];
    const rows = await this.tx.db
      .update(domainEvents)
      .set({ data: sql`${domainEvents.data} - ${sql.param([...members])}::text[]` })
      .where(
        and(
          eq(domainEvents.organizationId, organizationId),
          sql`${domainEvents.data}->>'traceId' = any(${sql.param([...traceIds])}::text[])`,
          // Only the events that hold one of them with a value change (and count as changed): a review without notes
          // records `notes: null`.
          sql`jsonb_strip_nulls(${domainEvents.data}) ?| ${sql.param([...members])}::text[]`,
        ),
      )
      .returning({ id: domainEvents.id });
    return rows.map((r) => r.id);
  }

  /** Deletes the events (of every organization) whose id sorts before `beforeId`, `batch` at a time. */
  purgeBefore(beforeId: string, batch: number): Promise<number> {
    return deleteInBatches(this.tx.db, domainEvents, domainEvents.id, lt(domainEvents.id, beforeId), batch);
  }
}
