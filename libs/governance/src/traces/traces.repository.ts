import { Injectable } from '@nestjs/common';
import {
  and,
  asc,
  desc,
  eq,
  gte,
  inArray,
  isNull,
  lte,
  max,
  ne,
  notInArray,
  or,
  sql,
  type SQL,
} from 'drizzle-orm';
import { bulkInsert, type Query, TransactionHost, writeQuery } from '#platform';
import type { AgentTraceStats } from '../agents/dto/agent.dto.js';
import { TraceRollups } from './trace-rollups.js';
import { traceIdempotencyKeys, traces, type TraceRow, type TraceStatus } from './trace.schema.js';

export interface TraceFilter {
  agentId?: string;
  /** null: every agent of the organization (the caller's scope is not limited). */
  agentScope: string[] | null;
  status?: TraceStatus;
  from?: Date;
  to?: Date;
}

/**
 * Which traces a purge deletes: created before `before`, optionally one agent's or one status's, never those of a
 * subject on legal hold (`heldSubjects`: a subquery of the subject hashes on hold, SubjectsRepository.heldQuery).
 */
export interface PurgeFilter {
  before: Date;
  agentId?: string;
  status?: TraceStatus;
  heldSubjects?: SQL;
}

function purgeWhere(organizationId: string, filter: PurgeFilter): SQL {
  return and(
    eq(traces.organizationId, organizationId),
    sql`${traces.createdAt} < ${filter.before}`,
    filter.agentId ? eq(traces.agentId, filter.agentId) : undefined,
    filter.status ? eq(traces.status, filter.status) : undefined,
    filter.heldSubjects
      ? or(isNull(traces.subjectHash), notInArray(traces.subjectHash, filter.heldSubjects))
      : undefined,
  )!;
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
/** The review queue shows this much of a trace's prompt and of its output text. */
export const REVIEW_EXCERPT_LENGTH = 500;

export interface TraceExcerpt {
  prompt: string;
  text: string;
  confidence: number;
  /** `outputDecision.action` as stored (a string, else anything or null). */
  action: unknown;
}

@Injectable()
export class TracesRepository {
  constructor(
    private readonly tx: TransactionHost,
    private readonly rollups: TraceRollups,
  ) {}

  /**
   * Claims idempotency keys (each (organization, key) at most once in the call) for their traces: a key not yet
   * used, or used before `expiredBefore`, is claimed. Reads, per `organizationId:key`, null when claimed, else the
   * trace holding the key (undefined if it vanished meanwhile). Callers hold the organizations' chain locks, so
   * every other claim of these keys has committed before this statement's snapshot.
   */
  claimIdempotencyKeysQuery(
    claims: { organizationId: string; key: string; traceId: string }[],
    now: Date,
    expiredBefore: Date,
  ): Query<Map<string, string | null | undefined>> {
    const orgs = sql.param(claims.map((c) => c.organizationId));
    const keys = sql.param(claims.map((c) => c.key));
    const k = traceIdempotencyKeys;
    return {
      statements: [
        sql`with claimed as (
              insert into ${k} (organization_id, key, trace_id, created_at)
              select c.organization_id, c.key, c.trace_id, ${now.toISOString()}::timestamptz
                from unnest(${orgs}::text[], ${keys}::text[], ${sql.param(claims.map((c) => c.traceId))}::text[])
                  as c(organization_id, key, trace_id)
              on conflict (organization_id, key) do update
                set trace_id = excluded.trace_id, created_at = excluded.created_at
                where ${k.createdAt} < ${expiredBefore.toISOString()}::timestamptz
              returning organization_id, key
            )
            select c.organization_id, c.key, cl.key is not null as claimed, t.trace_id as holder
            from unnest(${orgs}::text[], ${keys}::text[]) as c(organization_id, key)
            left join claimed cl on cl.organization_id = c.organization_id and cl.key = c.key
            left join ${k} t on t.organization_id = c.organization_id and t.key = c.key`,
      ],
      read: ([rows]) =>
        new Map(
          rows!.map((r) => [
            `${String(r.organization_id)}:${String(r.key)}`,
            r.claimed === true ? null : typeof r.holder === 'string' ? r.holder : undefined,
          ]),
        ),
    };
  }

  insertTracesQuery(rows: TraceRow[]): Query<void> {
    return writeQuery(...(rows.length > 0 ? [bulkInsert(traces, rows)] : []));
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

  /**
   * Newest first. The page is found on the (organization, [agent | status,] created_at) indexes and only its rows
   * are read (a deep page skips index entries, not rows); the total comes from the daily rollups.
   */
  async list(
    organizationId: string,
    filter: TraceFilter,
    page: { limit: number; offset: number },
  ): Promise<{ rows: TraceRow[]; total: number }> {
    const where = this.filterWhere(organizationId, filter);
    const pageIds = this.tx.db
      .select({ id: traces.id })
      .from(traces)
      .where(where)
      .orderBy(desc(traces.createdAt), desc(traces.id))
      .limit(page.limit)
      .offset(page.offset);
    const [rows, total] = await Promise.all([
      this.tx.db
        .select()
        .from(traces)
        .where(and(eq(traces.organizationId, organizationId), inArray(traces.id, pageIds)))
        .orderBy(desc(traces.createdAt), desc(traces.id)),
      this.rollups.count(organizationId, {
        agentIds: agentIdsOf(filter),
        status: filter.status,
        from: filter.from,
        to: filter.to,
      }),
    ]);
    return { rows, total };
  }

  /**
   * Whether the trace's content was erased, read under a row lock on the trace (the decision that asks updates the
   * trace next anyway): a review decision that would add notes waits for an erasure batch holding the trace, and an
   * erasure batch waits for such a decision to commit (then erases its notes).
   */
  async isErasedLocked(organizationId: string, id: string): Promise<boolean> {
    const [row] = await this.tx.db
      .select({ erasedAt: traces.erasedAt })
      .from(traces)
      .where(and(eq(traces.organizationId, organizationId), eq(traces.id, id)))
      .for('update');
    return Boolean(row?.erasedAt);
  }

  /**
   * What the review queue shows of its items' traces, and what an approval pattern's signature needs: the prompt and
   * output text (cut to the excerpt length), the confidence and the output's action.
   */
  async reviewExcerpts(organizationId: string, ids: readonly string[]): Promise<Map<string, TraceExcerpt>> {
    if (ids.length === 0) return new Map();
    const rows = await this.tx.db
      .select({
        id: traces.id,
        prompt: sql<string>`left(${traces.inputContext}->>'prompt', ${REVIEW_EXCERPT_LENGTH})`,
        text: sql<string>`left(${traces.outputDecision}->>'text', ${REVIEW_EXCERPT_LENGTH})`,
        action: sql<unknown>`${traces.outputDecision}->'action'`,
        confidence: traces.confidence,
      })
      .from(traces)
      .where(and(eq(traces.organizationId, organizationId), inArray(traces.id, [...ids])));
    return new Map(
      rows.map((row) => [
        row.id,
        { prompt: row.prompt ?? '', text: row.text ?? '', confidence: row.confidence, action: row.action },
      ]),
    );
  }

  /** A review decision's effect on its trace: approved or blocked (escalation leaves it flagged). */
  async setReviewedStatus(
    organizationId: string,
    id: string,
    status: 'approved' | 'blocked',
    at: Date,
  ): Promise<void> {
    await this.tx.run(async () => {
      const [before] = await this.tx.db
        .select({
          agentId: traces.agentId,
          createdAt: traces.createdAt,
          status: traces.status,
          humanOverride: traces.humanOverride,
          confidence: traces.confidence,
        })
        .from(traces)
        .where(and(eq(traces.organizationId, organizationId), eq(traces.id, id)))
        .for('update');
      if (!before) return;
      await this.tx.db
        .update(traces)
        .set({ status, updatedAt: at })
        .where(and(eq(traces.organizationId, organizationId), eq(traces.id, id)));
      await this.rollups.traceChanged(organizationId, before, { ...before, status });
    });
  }

  /**
   * Applies a human verdict (POST /cpi/ingest) to one trace under a row lock, so concurrent submissions serialise and
   * each sees the state the previous one left; returns the trace before and after, or undefined when absent. The
   * rollups are told in the same transaction.
   */
  async applyFeedback(
    organizationId: string,
    id: string,
    change: (
      before: TraceRow,
    ) => Pick<TraceRow, 'status' | 'humanOverride' | 'outputDecision' | 'metadata' | 'rationale'>,
    at: Date,
  ): Promise<{ before: TraceRow; after: TraceRow } | undefined> {
    return this.tx.run(async () => {
      const [before] = await this.tx.db
        .select()
        .from(traces)
        .where(and(eq(traces.organizationId, organizationId), eq(traces.id, id)))
        .for('update');
      if (!before) return undefined;
      const [after] = await this.tx.db
        .update(traces)
        .set({ ...change(before), updatedAt: at })
        .where(and(eq(traces.organizationId, organizationId), eq(traces.id, id)))
        .returning();
      await this.rollups.traceChanged(organizationId, before, after!);
      return { before, after: after! };
    });
  }

  /** Replaces a trace's similarity text (after a human correction, so that similar-trace search finds it). */
  async setSearchText(organizationId: string, id: string, searchText: string): Promise<void> {
    await this.tx.db
      .update(traces)
      .set({ searchText })
      // Never puts text back into a trace whose content was erased in between.
      .where(and(eq(traces.organizationId, organizationId), eq(traces.id, id), isNull(traces.erasedAt)));
  }

  /** Points the trace at the audit entry that records its current content's hash (after a CPI verdict). */
  async setContentEntry(organizationId: string, id: string, entryId: string): Promise<void> {
    await this.tx.db
      .update(traces)
      .set({ contentEntryId: entryId })
      .where(and(eq(traces.organizationId, organizationId), eq(traces.id, id)));
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

  /** Counts, mean confidence and last trace of one agent: the daily rollups, and the newest trace by index. */
  async agentStats(organizationId: string, agentId: string): Promise<AgentTraceStats> {
    const [rows, [last]] = await Promise.all([
      this.rollups.rows(organizationId, { agentIds: [agentId] }),
      this.tx.db
        .select({ lastTraceAt: max(traces.createdAt) })
        .from(traces)
        .where(and(eq(traces.organizationId, organizationId), eq(traces.agentId, agentId))),
    ]);
    const stats: AgentTraceStats = {
      total: 0,
      approved: 0,
      flagged: 0,
      blocked: 0,
      success: 0,
      averageConfidence: null,
      humanOverrides: 0,
      lastTraceAt: last?.lastTraceAt ?? null,
    };
    let confidenceSum = 0;
    for (const row of rows) {
      stats.total += row.traces;
      stats[row.status] += row.traces;
      if (row.humanOverride) stats.humanOverrides += row.traces;
      confidenceSum += row.confidenceSum;
    }
    stats.averageConfidence = stats.total > 0 ? confidenceSum / stats.total : null;
    return stats;
  }

  /**
   * Traces per matched policy among the organization's traces created in [from, to): read through the partial
   * index of traces that matched a policy, so the period's other traces are not visited.
   */
  async policyMatches(organizationId: string, from: Date, to: Date): Promise<Map<string, number>> {
    const result = await this.tx.db
      .execute(sql`select match->>'policyId' as policy_id, count(*)::int as traces
      from ${traces} cross join lateral jsonb_array_elements(${traces.policyResults}) as match
      where ${traces.organizationId} = ${organizationId} and ${traces.createdAt} >= ${from}
        and ${traces.createdAt} < ${to} and ${traces.policyResults} <> '[]'::jsonb
      group by 1`);
    const rows = (result as unknown as { rows: { policy_id: string; traces: number }[] }).rows;
    return new Map(rows.map((r) => [r.policy_id, Number(r.traces)]));
  }

  /** The `limit` least confident traces created in [from, to) below `below`, least confident first. */
  async lowConfidence(
    organizationId: string,
    from: Date,
    to: Date,
    below: number,
    limit: number,
  ): Promise<Pick<TraceRow, 'id' | 'agentId' | 'status' | 'confidence' | 'createdAt'>[]> {
    return this.tx.db
      .select({
        id: traces.id,
        agentId: traces.agentId,
        status: traces.status,
        confidence: traces.confidence,
        createdAt: traces.createdAt,
      })
      .from(traces)
      .where(
        and(
          eq(traces.organizationId, organizationId),
          gte(traces.createdAt, from),
          sql`${traces.createdAt} < ${to}`,
          sql`${traces.confidence} < ${below}`,
        ),
      )
      .orderBy(traces.confidence, desc(traces.createdAt), desc(traces.id))
      .limit(limit);
  }
  /**
   * How many traces created in [from, to], of one agent or all, have a confidence below 0.5: read through the
   * partial index of low-confidence traces (the constant is the index's predicate), not the window's other traces.
   */
  async lowConfidenceCount(
    organizationId: string,
    from: Date,
    to: Date,
    agentId?: string | null,
  ): Promise<number> {
    const [row] = await this.tx.db
      .select({ n: sql<number>`count(*)::int` })
      .from(traces)
      .where(
        and(
          eq(traces.organizationId, organizationId),
          gte(traces.createdAt, from),
          lte(traces.createdAt, to),
          sql`${traces.confidence} < 0.5`,
          agentId ? eq(traces.agentId, agentId) : undefined,
        ),
      );
    return Number(row?.n ?? 0);
  }

  /** A subject's traces (every agent's), newest first, with their count. */
  async listBySubject(
    organizationId: string,
    subjectHash: string,
    page: { limit: number; offset: number },
  ): Promise<{ rows: TraceRow[]; total: number }> {
    const where = and(eq(traces.organizationId, organizationId), eq(traces.subjectHash, subjectHash));
    const [rows, [count]] = await Promise.all([
      this.tx.db
        .select()
        .from(traces)
        .where(where)
        .orderBy(desc(traces.createdAt), desc(traces.id))
        .limit(page.limit)
        .offset(page.offset),
      this.tx.db
        .select({ n: sql<number>`count(*)::int` })
        .from(traces)
        .where(where),
    ]);
    return { rows, total: Number(count?.n ?? 0) };
  }

  /**
   * Erases the content of up to `limit` of the subject's traces not yet erased (in the caller's transaction): the
   * content reads null, the similarity text is emptied, the salt is dropped (the hash in the audit entry then links
   * to nothing) and `erasedAt` is set; status, confidence, policies and times stay. Returns the traces erased.
   */
  async eraseSubjectBatch(
    organizationId: string,
    subjectHash: string,
    limit: number,
    at: Date,
    after?: SubjectErasureCursor,
  ): Promise<ErasedTrace[]> {
    // In the subject index's order from the previous batch's last trace, so that no batch reads the traces the
    // earlier ones erased (a subject's traces ingested meanwhile are newer, and still reached).
    const picked = this.tx.db
      .select({ id: traces.id })
      .from(traces)
      .where(
        and(
          eq(traces.organizationId, organizationId),
          eq(traces.subjectHash, subjectHash),
          after ? sql`(${traces.createdAt}, ${traces.id}) > (${after.createdAt}, ${after.id})` : undefined,
          isNull(traces.erasedAt),
        ),
      )
      .orderBy(asc(traces.createdAt), asc(traces.id))
      .limit(limit)
      .for('update');
    const rows = await this.tx.db
      .update(traces)
      .set({ ...ERASED_CONTENT, erasedAt: at, updatedAt: at })
      .where(and(eq(traces.organizationId, organizationId), inArray(traces.id, picked)))
      .returning({ id: traces.id, createdAt: traces.createdAt, reviewItemId: traces.reviewItemId });
    return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
  }

  /** How many of the organization's traces a purge's filter matches. */
  async countForPurge(organizationId: string, filter: PurgeFilter): Promise<number> {
    const [row] = await this.tx.db
      .select({ n: sql<number>`count(*)::int` })
      .from(traces)
      .where(purgeWhere(organizationId, filter));
    return Number(row?.n ?? 0);
  }

  /**
   * Deletes up to `limit` of the filter's traces, oldest first, with their idempotency keys; returns what was
   * deleted. Rows another transaction holds are skipped (`SKIP LOCKED`): a later batch takes them.
   */
  async deleteBatch(
    organizationId: string,
    filter: PurgeFilter,
    limit: number,
  ): Promise<Array<{ id: string; createdAt: Date }>> {
    const picked = this.tx.db
      .select({ id: traces.id })
      .from(traces)
      .where(purgeWhere(organizationId, filter))
      .orderBy(traces.createdAt)
      .limit(limit)
      .for('update', { skipLocked: true });
    const rows = await this.tx.db
      .delete(traces)
      .where(and(eq(traces.organizationId, organizationId), inArray(traces.id, picked)))
      .returning({ id: traces.id, createdAt: traces.createdAt });
    if (rows.length > 0) {
      await this.tx.db.delete(traceIdempotencyKeys).where(
        and(
          eq(traceIdempotencyKeys.organizationId, organizationId),
          inArray(
            traceIdempotencyKeys.traceId,
            rows.map((r) => r.id),
          ),
        ),
      );
    }
    return rows;
  }
}

/** Where a subject's erasure goes on from: the last trace of its previous batch. */
export interface SubjectErasureCursor {
  createdAt: Date;
  id: string;
}

/** A trace a subject's erasure batch erased. */
export interface ErasedTrace extends SubjectErasureCursor {
  reviewItemId: string | null;
}

/** The personal content a subject's erasure removes from a trace, and what it leaves (contract-decisions §19). */
const ERASED_CONTENT = {
  inputContext: null,
  outputDecision: null,
  metadata: null,
  rationale: null,
  searchText: '',
  contentSalt: null,
} as const;

/** The agents a filter allows: its agent (if inside its scope), else its scope (null: every agent). */
function agentIdsOf(filter: TraceFilter): readonly string[] | null {
  if (filter.agentId)
    return filter.agentScope && !filter.agentScope.includes(filter.agentId) ? [] : [filter.agentId];
  return filter.agentScope;
}
