import { Injectable } from '@nestjs/common';
import { and, count, desc, eq, gte, inArray, lt, lte, ne, sql, type SQL } from 'drizzle-orm';
import { TransactionHost } from '../../../platform/src/index.js';
import { agents } from '../agents/agent.schema.js';
import { reviewItems, type ReviewItemRow } from '../review/review-item.schema.js';
import { traceIdempotencyKeys, traces, type TraceRow, type TraceStatus } from './trace.schema.js';

export interface TraceFilter {
  agentId?: string;
  /** null: every agent of the organization (the caller's scope is not limited). */
  agentScope: string[] | null;
  status?: TraceStatus;
  from?: Date;
  to?: Date;
}

export interface SimilarTraceRow {
  id: string;
  status: TraceStatus;
  confidence: number;
  similarity: number;
  createdAt: Date;
  excerpt: string;
}

/** Least trigram similarity for GET /traces/:id/similar; `%` compares against it, so the GIN index is used. */
export const SIMILARITY_THRESHOLD = 0.2;
export const EXCERPT_LENGTH = 200;

@Injectable()
export class TracesRepository {
  constructor(private readonly tx: TransactionHost) {}

  async agentExists(organizationId: string, agentId: string): Promise<boolean> {
    const [row] = await this.tx.db
      .select({ id: agents.id })
      .from(agents)
      .where(and(eq(agents.organizationId, organizationId), eq(agents.id, agentId)))
      .limit(1);
    return row !== undefined;
  }

  /**
   * Claims an idempotency key. Concurrent claims of one key wait on the primary key until the first
   * transaction ends, then do nothing: exactly one wins. Returns whether this call inserted the row.
   */
  async claimIdempotencyKey(
    organizationId: string,
    key: string,
    traceId: string,
    now: Date,
  ): Promise<boolean> {
    const rows = await this.tx.db
      .insert(traceIdempotencyKeys)
      .values({ organizationId, key, traceId, createdAt: now })
      .onConflictDoNothing()
      .returning({ traceId: traceIdempotencyKeys.traceId });
    return rows.length === 1;
  }

  /**
   * Takes over a key whose row is older than `expiredBefore`. The condition is re-checked on the locked row,
   * so of two concurrent take-overs only one succeeds.
   */
  async takeOverExpiredKey(
    organizationId: string,
    key: string,
    traceId: string,
    now: Date,
    expiredBefore: Date,
  ): Promise<boolean> {
    const rows = await this.tx.db
      .update(traceIdempotencyKeys)
      .set({ traceId, createdAt: now })
      .where(
        and(
          eq(traceIdempotencyKeys.organizationId, organizationId),
          eq(traceIdempotencyKeys.key, key),
          lt(traceIdempotencyKeys.createdAt, expiredBefore),
        ),
      )
      .returning({ traceId: traceIdempotencyKeys.traceId });
    return rows.length === 1;
  }

  async findIdempotencyKey(
    organizationId: string,
    key: string,
  ): Promise<{ traceId: string; createdAt: Date } | undefined> {
    const [row] = await this.tx.db
      .select({ traceId: traceIdempotencyKeys.traceId, createdAt: traceIdempotencyKeys.createdAt })
      .from(traceIdempotencyKeys)
      .where(and(eq(traceIdempotencyKeys.organizationId, organizationId), eq(traceIdempotencyKeys.key, key)))
      .limit(1);
    return row;
  }

  async insertTrace(row: TraceRow): Promise<void> {
    await this.tx.db.insert(traces).values(row);
  }

  async insertReviewItem(row: ReviewItemRow): Promise<void> {
    await this.tx.db.insert(reviewItems).values(row);
  }

  private filterWhere(organizationId: string, filter: TraceFilter): SQL {
    const conditions: SQL[] = [eq(traces.organizationId, organizationId)];
    if (filter.agentScope) conditions.push(inArray(traces.agentId, filter.agentScope));
    if (filter.agentId) conditions.push(eq(traces.agentId, filter.agentId));
    if (filter.status) conditions.push(eq(traces.status, filter.status));
    if (filter.from) conditions.push(gte(traces.createdAt, filter.from));
    if (filter.to) conditions.push(lte(traces.createdAt, filter.to));
    return and(...conditions)!;
  }

  /** Newest first; served by the (organization, [agent | status,] created_at) indexes. */
  async list(
    organizationId: string,
    filter: TraceFilter,
    page: { limit: number; offset: number },
  ): Promise<{ rows: TraceRow[]; total: number }> {
    const where = this.filterWhere(organizationId, filter);
    const [rows, [totals]] = await Promise.all([
      this.tx.db
        .select()
        .from(traces)
        .where(where)
        .orderBy(desc(traces.createdAt), desc(traces.id))
        .limit(page.limit)
        .offset(page.offset),
      this.tx.db.select({ total: count() }).from(traces).where(where),
    ]);
    return { rows, total: totals?.total ?? 0 };
  }

  async findById(organizationId: string, id: string): Promise<TraceRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(traces)
      .where(and(eq(traces.organizationId, organizationId), eq(traces.id, id)))
      .limit(1);
    return row;
  }

  /**
   * Traces of the organization whose search text is trigram-similar to `text`, most similar first. The
   * threshold is set for this transaction only, and `%` lets PostgreSQL use the GIN trigram index.
   */
  async similar(
    organizationId: string,
    excludeId: string,
    text: string,
    agentScope: string[] | null,
    limit: number,
  ): Promise<SimilarTraceRow[]> {
    return this.tx.run(async () => {
      await this.tx.db.execute(
        sql`select set_config('pg_trgm.similarity_threshold', ${String(SIMILARITY_THRESHOLD)}, true)`,
      );
      const similarity = sql<number>`similarity(${traces.searchText}, ${text})`;
      const conditions: SQL[] = [
        eq(traces.organizationId, organizationId),
        ne(traces.id, excludeId),
        sql`${traces.searchText} % ${text}`,
      ];
      if (agentScope) conditions.push(inArray(traces.agentId, agentScope));
      const rows = await this.tx.db
        .select({
          id: traces.id,
          status: traces.status,
          confidence: traces.confidence,
          similarity,
          createdAt: traces.createdAt,
          excerpt: sql<string>`left(${traces.searchText}, ${EXCERPT_LENGTH})`,
        })
        .from(traces)
        .where(and(...conditions))
        .orderBy(desc(similarity), desc(traces.createdAt))
        .limit(limit);
      return rows.map((r) => ({ ...r, similarity: Number(r.similarity) }));
    });
  }
}
