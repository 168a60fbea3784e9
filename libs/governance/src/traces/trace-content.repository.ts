import { Injectable } from '@nestjs/common';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import { auditEntries, TransactionHost } from '#platform';
import type { RecordedContent, TraceContent } from './trace-content.js';
import { TRACE_AUDIT_EVENTS } from './trace-events.js';
import { traces } from './trace.schema.js';

/**
 * A stored trace as its content check reads it (`decideContent`): the content, its salt, whether erased, and the
 * audit entry it points at as the one recording its content's hash.
 */
export interface StoredTraceContent extends TraceContent {
  id: string;
  contentSalt: string | null;
  contentEntryId: string | null;
  erasedAt: Date | null;
}

/** A PostgreSQL array literal of ids, one parameter however many (quoted: an id is whatever a row holds). */
const idArray = (ids: readonly string[]): string =>
  `{${ids.map((id) => `"${id.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;

/**
 * The traces' content for bulk checks against the audit log (GET /audit/verify?content=true): batches of traces by
 * id, through the primary key. A trace's content may be as large as the body limit, so callers size their batches
 * with `storedSizes` first.
 */
@Injectable()
export class TraceContentRepository {
  constructor(private readonly tx: TransactionHost) {}

  private byIds(organizationId: string, ids: readonly string[]) {
    return and(
      eq(traces.organizationId, organizationId),
      sql`${traces.id} = any(${idArray(ids)}::varchar[])`,
    );
  }

  /**
   * The traces among `ids` that exist in the organization, with the bytes their content takes as stored (compressed
   * or not: PostgreSQL's `pg_column_size`, read without detoasting the values).
   */
  async storedSizes(
    organizationId: string,
    ids: readonly string[],
  ): Promise<{ id: string; bytes: number }[]> {
    if (ids.length === 0) return [];
    return this.tx.db
      .select({
        id: traces.id,
        bytes: sql<number>`(coalesce(pg_column_size(${traces.inputContext}), 0)
          + coalesce(pg_column_size(${traces.outputDecision}), 0) + coalesce(pg_column_size(${traces.metadata}), 0)
          + coalesce(pg_column_size(${traces.rationale}), 0))::int`,
      })
      .from(traces)
      .where(this.byIds(organizationId, ids));
  }

  /** The traces among `ids` that exist in the organization, with their content (in no particular order). */
  async contentOf(organizationId: string, ids: readonly string[]): Promise<StoredTraceContent[]> {
    if (ids.length === 0) return [];
    return this.tx.db
      .select({
        id: traces.id,
        inputContext: traces.inputContext,
        outputDecision: traces.outputDecision,
        metadata: traces.metadata,
        rationale: traces.rationale,
        contentSalt: traces.contentSalt,
        contentEntryId: traces.contentEntryId,
        erasedAt: traces.erasedAt,
      })
      .from(traces)
      .where(this.byIds(organizationId, ids));
  }

  /**
   * The entry that decides one trace's content (`decideContent`): its latest CPI verdict that records a content hash
   * (audit_entries_org_trace_verdict_idx), else the ingestion entry the trace points at, when that is one of the
   * organization's entries about this trace and records a hash. The same entry the bulk check finds by walking the
   * chain, without the walk.
   */
  async recordedContent(
    organizationId: string,
    traceId: string,
    pointer: string | null,
  ): Promise<RecordedContent | null> {
    const hash = sql<string>`${auditEntries.metadata}->>'contentHash'`;
    const about = and(
      eq(auditEntries.organizationId, organizationId),
      eq(auditEntries.targetType, 'trace'),
      eq(auditEntries.targetId, traceId),
      sql`${hash} is not null`,
    );
    const [verdict] = await this.tx.db
      .select({ id: auditEntries.id, hash })
      .from(auditEntries)
      .where(and(about, sql`${auditEntries.eventType} in ('cpi.approved', 'cpi.corrected')`))
      .orderBy(desc(auditEntries.sequence))
      .limit(1);
    if (verdict) return verdict;
    if (pointer === null) return null;
    const [ingested] = await this.tx.db
      .select({ id: auditEntries.id, hash })
      .from(auditEntries)
      .where(and(about, eq(auditEntries.id, pointer), inArray(auditEntries.eventType, TRACE_AUDIT_EVENTS)));
    return ingested ?? null;
  }

  /**
   * The traces among `ids` that exist in the organization, with when they were erased and without their content:
   * for traces whose audit entries record no content hash, whose content is not read.
   */
  async erasedAtOf(
    organizationId: string,
    ids: readonly string[],
  ): Promise<
    { id: string; erasedAt: Date | null; contentSalt: string | null; contentEntryId: string | null }[]
  > {
    if (ids.length === 0) return [];
    return this.tx.db
      .select({
        id: traces.id,
        erasedAt: traces.erasedAt,
        contentSalt: traces.contentSalt,
        contentEntryId: traces.contentEntryId,
      })
      .from(traces)
      .where(this.byIds(organizationId, ids));
  }
}
