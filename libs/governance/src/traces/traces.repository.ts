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
   * Of the given agents and API keys, those still live in the organization: agents not deleted, keys not
   * revoked. One statement for a whole batch of writes.
   */
  async liveAgentsAndKeys(
    organizationId: string,
    agentIds: string[],
    keyIds: string[],
  ): Promise<{ agentIds: Set<string>; keyIds: Set<string> }> {
    const result = await this.tx.db.execute(sql`
      select 'agent' as kind, ${agents.id} as id from ${agents}
        where ${agents.organizationId} = ${organizationId} and ${agents.id} = any(${sql.param(agentIds)}::text[])
      union all
      select 'key', ${apiKeys.id} from ${apiKeys}
        where ${apiKeys.organizationId} = ${organizationId} and ${apiKeys.id} = any(${sql.param(keyIds)}::text[])
          and ${apiKeys.revokedAt} is null`);
    const live = { agentIds: new Set<string>(), keyIds: new Set<string>() };
    for (const row of (result as unknown as { rows: { kind: string; id: string }[] }).rows) {
      (row.kind === 'agent' ? live.agentIds : live.keyIds).add(row.id);
    }
    return live;
  }

  /**
   * Claims idempotency keys (each at most once in the call) for their traces: a key not yet used, or used
   * before `expiredBefore`, is claimed. Returns the keys claimed; the others are taken. Callers hold the
   * organization's chain lock, so no concurrent claim of the same key can interleave.
   */
  async claimIdempotencyKeys(
    organizationId: string,
    claims: { key: string; traceId: string }[],
    now: Date,
    expiredBefore: Date,
  ): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const rows = await this.tx.db
      .insert(traceIdempotencyKeys)
      .values(claims.map((c) => ({ organizationId, key: c.key, traceId: c.traceId, createdAt: now })))
      .onConflictDoUpdate({
        target: [traceIdempotencyKeys.organizationId, traceIdempotencyKeys.key],
        set: { traceId: sql`excluded.trace_id`, createdAt: sql`excluded.created_at` },
        setWhere: lt(traceIdempotencyKeys.createdAt, expiredBefore),
      })
      .returning({ key: traceIdempotencyKeys.key });
    return new Set(rows.map((r) => r.key));
  }

  /** The traces that hold the given idempotency keys. */
  async tracesOfIdempotencyKeys(organizationId: string, keys: string[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const rows = await this.tx.db
      .select({ key: traceIdempotencyKeys.key, traceId: traceIdempotencyKeys.traceId })
      .from(traceIdempotencyKeys)
      .where(
        and(eq(traceIdempotencyKeys.organizationId, organizationId), inArray(traceIdempotencyKeys.key, keys)),
      );
    return new Map(rows.map((r) => [r.key, r.traceId]));
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
