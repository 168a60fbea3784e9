import { Injectable } from '@nestjs/common';
import { and, count, desc, eq, gte, inArray, lt, lte, ne, sql, type SQL } from 'drizzle-orm';
import { bulkInsert, TransactionHost } from '../../../platform/src/index.js';
import { apiKeys } from '../../../identity/src/api-keys/api-key.schema.js';
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

  /**
   * Of the given (organization, agent) and (organization, API key) pairs, those still live: agents not deleted,
   * keys not revoked. One statement for a whole batch of writes; answers `organizationId:id` strings.
   */
  async livePairs(
    agentPairs: { organizationId: string; id: string }[],
    keyPairs: { organizationId: string; id: string }[],
  ): Promise<Set<string>> {
    const orgs = (pairs: { organizationId: string }[]) => sql.param(pairs.map((p) => p.organizationId));
    const ids = (pairs: { id: string }[]) => sql.param(pairs.map((p) => p.id));
    const result = await this.tx.db.execute(sql`
      select ${agents.organizationId} as organization_id, ${agents.id} as id from ${agents}
        where (${agents.organizationId}, ${agents.id}) in (
          select * from unnest(${orgs(agentPairs)}::text[], ${ids(agentPairs)}::text[]))
      union all
      select ${apiKeys.organizationId}, ${apiKeys.id} from ${apiKeys}
        where (${apiKeys.organizationId}, ${apiKeys.id}) in (
          select * from unnest(${orgs(keyPairs)}::text[], ${ids(keyPairs)}::text[]))
          and ${apiKeys.revokedAt} is null`);
    const rows = (result as unknown as { rows: { organization_id: string; id: string }[] }).rows;
    return new Set(rows.map((row) => `${row.organization_id}:${row.id}`));
  }

  /**
   * Claims idempotency keys (each (organization, key) at most once in the call) for their traces: a key not yet
   * used, or used before `expiredBefore`, is claimed. Returns the claimed ones as `organizationId:key`; the others
   * are taken. Callers hold the organizations' chain locks, so no concurrent claim of the same key interleaves.
   */
  async claimIdempotencyKeys(
    claims: { organizationId: string; key: string; traceId: string }[],
    now: Date,
    expiredBefore: Date,
  ): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const rows = await this.tx.db
      .insert(traceIdempotencyKeys)
      .values(claims.map((c) => ({ ...c, createdAt: now })))
      .onConflictDoUpdate({
        target: [traceIdempotencyKeys.organizationId, traceIdempotencyKeys.key],
        set: { traceId: sql`excluded.trace_id`, createdAt: sql`excluded.created_at` },
        setWhere: lt(traceIdempotencyKeys.createdAt, expiredBefore),
      })
      .returning({ organizationId: traceIdempotencyKeys.organizationId, key: traceIdempotencyKeys.key });
    return new Set(rows.map((r) => `${r.organizationId}:${r.key}`));
  }

  /** The traces that hold the given (organization, idempotency key) pairs, as `organizationId:key` → trace id. */
  async tracesOfIdempotencyKeys(
    pairs: { organizationId: string; key: string }[],
  ): Promise<Map<string, string>> {
    if (pairs.length === 0) return new Map();
    const result = await this.tx.db.execute(sql`
      select ${traceIdempotencyKeys.organizationId} as organization_id, ${traceIdempotencyKeys.key} as key,
             ${traceIdempotencyKeys.traceId} as trace_id
      from ${traceIdempotencyKeys}
      where (${traceIdempotencyKeys.organizationId}, ${traceIdempotencyKeys.key}) in (
        select * from unnest(${sql.param(pairs.map((p) => p.organizationId))}::text[],
                             ${sql.param(pairs.map((p) => p.key))}::text[]))`);
    const rows = (result as unknown as { rows: { organization_id: string; key: string; trace_id: string }[] })
      .rows;
    return new Map(rows.map((r) => [`${r.organization_id}:${r.key}`, r.trace_id]));
  }

  async insertTraces(rows: TraceRow[]): Promise<void> {
    if (rows.length > 0) await this.tx.db.execute(bulkInsert(traces, rows));
  }

  async insertReviewItems(rows: ReviewItemRow[]): Promise<void> {
    if (rows.length > 0) await this.tx.db.execute(bulkInsert(reviewItems, rows));
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
