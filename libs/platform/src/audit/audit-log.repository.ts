import { Injectable } from '@nestjs/common';
import { and, asc, eq, gt, gte, inArray, or, sql } from 'drizzle-orm';
import { bulkInsert } from '../db/bulk-insert.js';
import { type Query, writeQuery } from '../db/query.js';
import { TransactionHost } from '../db/transaction-host.js';
import { auditEntries, type AuditEntryRow } from './audit.schema.js';
import type { ChainHead } from './audit-log.js';

/**
 * The audit_entries table for the audit log's write side (AuditLog): the chains' heads, the inserts, and the
 * entries that announce events. Reading, verification and export are the governance audit module's
 * (AuditRepository).
 */
@Injectable()
export class AuditLogRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** The last entry (sequence and hash) of each of these organizations' chains; none for an empty chain. */
  headsQuery(organizationIds: string[]): Query<Map<string, ChainHead>> {
    return {
      statements: [
        sql`select o.id as organization_id, h.sequence, h.hash
          from unnest(${sql.param(organizationIds)}::text[]) as o(id)
          join lateral (
            select ${auditEntries.sequence} as sequence, ${auditEntries.hash} as hash from ${auditEntries}
              where ${auditEntries.organizationId} = o.id order by ${auditEntries.sequence} desc limit 1
          ) h on true`,
      ],
      // bigint arrives as a number from node-postgres (its type parser) and may arrive otherwise from PGlite.
      read: ([rows]) =>
        new Map(
          rows!.map((r) => [
            String(r.organization_id),
            { sequence: Number(r.sequence), hash: String(r.hash) },
          ]),
        ),
    };
  }

  insertQuery(entries: AuditEntryRow[]): Query<void> {
    return writeQuery(bulkInsert(auditEntries, entries));
  }

  /** Entries by id, of any organization. */
  byIds(ids: readonly string[]): Promise<AuditEntryRow[]> {
    return this.tx.db
      .select()
      .from(auditEntries)
      .where(inArray(auditEntries.id, [...ids]));
  }

  /**
   * The organization's entries of these types from `from` on, after `after` (by time, then id), oldest first, at
   * most `limit`: the replay of the events they announce (DomainEvents).
   */
  entriesAfter(
    organizationId: string,
    eventTypes: readonly string[],
    from: Date,
    after: { createdAt: Date; id: string },
    limit: number,
  ): Promise<AuditEntryRow[]> {
    return this.tx.db
      .select()
      .from(auditEntries)
      .where(
        and(
          eq(auditEntries.organizationId, organizationId),
          gte(auditEntries.createdAt, from),
          inArray(auditEntries.eventType, [...eventTypes]),
          or(
            gt(auditEntries.createdAt, after.createdAt),
            and(eq(auditEntries.createdAt, after.createdAt), gt(auditEntries.id, after.id)),
          ),
        ),
      )
      .orderBy(asc(auditEntries.createdAt), asc(auditEntries.id))
      .limit(limit);
  }
}
