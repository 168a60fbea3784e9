import { Injectable } from '@nestjs/common';
import {
  type Actor,
  agentScopeOf,
  AppError,
  canAccessAgent,
  Clock,
  isObjectId,
  newId,
  type Page,
  pageRequest,
  type RequestMeta,
  type SchemaVersion,
  toPage,
  TransactionHost,
} from '../../../platform/src/index.js';
import { auditActorOf, AuditService } from '../audit/audit.service.js';
import { estimateConfidence, evaluate, type TraceFacts } from '../policies/engine/index.js';
import { PolicySet } from '../policies/policy-set.js';
import {
  type SimilarQueryDto,
  type SimilarTraceDto,
  type TraceDto,
  type TraceQueryDto,
  toSimilarTraceResponse,
  toTraceResponse,
} from './dto/trace.dto.js';
import { type IngestResponse, toIngestResponse } from './dto/ingest-response.js';
import {
  type TraceIngestInput,
  validateIdempotencyKey,
  validateTraceIngest,
} from './trace-ingest.validation.js';
import type { TraceRow } from './trace.schema.js';
import { TracesRepository } from './traces.repository.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** searchText holds prompt and output text up to this length: enough for similarity, bounded for the index. */
export const SEARCH_TEXT_MAX = 8000;

export interface IngestContext {
  /** The schema version in force for the request; its limits apply and it is stored on the trace. */
  schemaVersion: SchemaVersion;
  idempotencyKey?: string;
  meta?: RequestMeta;
}

export type IngestOutcome = { kind: 'stored'; trace: TraceRow } | { kind: 'duplicate'; id: string };

const agentIdError = (message: string) => AppError.validation(message, [{ field: 'agentId', message }]);

@Injectable()
export class TracesService {
  constructor(
    private readonly repo: TracesRepository,
    private readonly policies: PolicySet,
    private readonly audit: AuditService,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /** POST /traces: validates the body under the schema version in force, ingests it, and shapes the reply. */
  async ingestRequest(
    actor: Actor,
    body: unknown,
    idempotencyKeyHeader: string | string[] | undefined,
    ctx: Omit<IngestContext, 'idempotencyKey'>,
  ): Promise<IngestResponse> {
    const idempotencyKey = validateIdempotencyKey(idempotencyKeyHeader);
    const input = validateTraceIngest(body, ctx.schemaVersion.limits);
    const agentId = await this.resolveAgent(actor, input.agentId);
    return toIngestResponse(await this.ingest(actor, agentId, input, { ...ctx, idempotencyKey }));
  }

  /**
   * The agent a trace is recorded for: an agent key's own agent (a different body agentId is 403), or for
   * a workspace key the body's agentId, which is required and must lie in the key's scope. The agent must
   * exist in the caller's organization.
   */
  async resolveAgent(actor: Actor, requested: string | undefined): Promise<string> {
    let agentId: string;
    if (actor.credential === 'agentKey') {
      if (!actor.agentId) throw AppError.forbidden('This agent key is not bound to an agent');
      if (requested !== undefined && requested !== actor.agentId) {
        throw AppError.forbidden('agentId must be the agent this key is bound to');
      }
      agentId = actor.agentId;
    } else {
      if (!requested) throw agentIdError('agentId is required when ingesting with a workspace key');
      if (!canAccessAgent(actor, requested))
        throw AppError.forbidden('This API key is not scoped to that agent');
      agentId = requested;
    }
    if (!isObjectId(agentId) || !(await this.repo.agentExists(actor.organizationId, agentId))) {
      throw agentIdError('agentId does not name an agent of this organization');
    }
    return agentId;
  }

  /**
   * The ingest pipeline shared by POST /traces and OTLP: confidence (given, or estimated before policies),
   * policy evaluation, then in one transaction the idempotency claim, the trace, the review item of a flagged
   * trace and the audit entry. Blocked and flagged traces are stored too.
   */
  async ingest(
    actor: Actor,
    agentId: string,
    input: TraceIngestInput,
    ctx: IngestContext,
  ): Promise<IngestOutcome> {
    const organizationId = actor.organizationId;
    const confidence = input.confidence ?? estimateConfidence(input.outputDecision.text);
    const facts: TraceFacts = {
      agentId,
      confidence,
      inputContext: input.inputContext,
      outputDecision: input.outputDecision,
      metadata: input.metadata ?? {},
    };
    const evaluation = evaluate(await this.policies.forOrganization(organizationId), facts);
    const now = this.clock.now();
    const id = newId(now.getTime());

    return this.tx.run(async (): Promise<IngestOutcome> => {
      if (ctx.idempotencyKey !== undefined) {
        const duplicateOf = await this.claimKey(organizationId, ctx.idempotencyKey, id, now);
        if (duplicateOf) return { kind: 'duplicate', id: duplicateOf };
      }
      const reviewItemId = evaluation.status === 'flagged' ? newId(now.getTime()) : null;
      const trace: TraceRow = {
        id,
        organizationId,
        agentId,
        status: evaluation.status,
        confidence,
        inputContext: input.inputContext,
        outputDecision: input.outputDecision,
        metadata: input.metadata ?? {},
        rationale: input.rationale ?? null,
        schemaVersion: ctx.schemaVersion.version,
        humanOverride: false,
        policyResults: evaluation.policyResults,
        reviewItemId,
        searchText: searchTextOf(input),
        createdAt: now,
        updatedAt: now,
      };
      await this.repo.insertTrace(trace);
      if (reviewItemId) {
        await this.repo.insertReviewItem({
          id: reviewItemId,
          organizationId,
          traceId: id,
          agentId,
          status: 'pending',
          matchedPolicies: evaluation.policyResults,
          assignedTo: null,
          decision: null,
          notes: null,
          decidedBy: null,
          decidedAt: null,
          createdAt: now,
          updatedAt: now,
        });
      }
      await this.audit.append({
        organizationId,
        eventType: `trace.${evaluation.status}`,
        actor: auditActorOf(actor),
        targetType: 'trace',
        targetId: id,
        metadata: {
          agentId,
          confidence,
          schemaVersion: ctx.schemaVersion.version,
          policyIds: evaluation.policyResults.map((p) => p.policyId),
          ...(reviewItemId ? { reviewItemId } : {}),
        },
        meta: ctx.meta,
      });
      return { kind: 'stored', trace };
    });
  }

  /**
   * Claims the idempotency key for `traceId`; returns the first trace's id when the key is taken. A row older
   * than 24 hours is taken over by a conditional update (only one concurrent request can win it).
   */
  private async claimKey(
    organizationId: string,
    key: string,
    traceId: string,
    now: Date,
  ): Promise<string | undefined> {
    if (await this.repo.claimIdempotencyKey(organizationId, key, traceId, now)) return undefined;
    const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
    if (await this.repo.takeOverExpiredKey(organizationId, key, traceId, now, expiredBefore))
      return undefined;
    const existing = await this.repo.findIdempotencyKey(organizationId, key);
    if (!existing) {
      // Only possible if the row was purged between the two statements; the client may simply retry.
      throw AppError.conflict(
        'The idempotency key is being reused concurrently; retry',
        'SVC_DUPLICATE_REQUEST',
      );
    }
    return existing.traceId;
  }

  async list(actor: Actor, query: TraceQueryDto): Promise<Page<TraceDto>> {
    const from = query.from ? new Date(query.from) : undefined;
    const to = query.to ? new Date(query.to) : undefined;
    if (from && to && from > to) {
      throw AppError.validation('from must not be after to', [
        { field: 'from', message: 'from must not be after to' },
      ]);
    }
    const agentScope = agentScopeOf(actor);
    if (query.agentId && !canAccessAgent(actor, query.agentId)) {
      throw AppError.forbidden('This API key is not scoped to that agent');
    }
    const page = pageRequest(query, { limit: 20, max: 100 });
    const { rows, total } = await this.repo.list(
      actor.organizationId,
      { agentId: query.agentId, agentScope, status: query.status, from, to },
      page,
    );
    return toPage(rows.map(toTraceResponse), total, page);
  }

  private async findVisible(actor: Actor, id: string): Promise<TraceRow> {
    const row = isObjectId(id) ? await this.repo.findById(actor.organizationId, id) : undefined;
    // A trace outside the caller's agent scope is as invisible as one of another organization.
    if (!row || !canAccessAgent(actor, row.agentId)) throw AppError.notFound('Trace');
    return row;
  }

  async get(actor: Actor, id: string): Promise<TraceDto> {
    return toTraceResponse(await this.findVisible(actor, id));
  }

  async similar(actor: Actor, id: string, query: SimilarQueryDto): Promise<SimilarTraceDto[]> {
    const trace = await this.findVisible(actor, id);
    const rows = await this.repo.similar(
      actor.organizationId,
      trace.id,
      trace.searchText,
      agentScopeOf(actor),
      query.limit ?? 5,
    );
    return rows.map(toSimilarTraceResponse);
  }
}

/** Prompt and output text, bounded: what GET /traces/:id/similar compares. */
export function searchTextOf(input: TraceIngestInput): string {
  return `${input.inputContext.prompt}\n${input.outputDecision.text}`.slice(0, SEARCH_TEXT_MAX);
}
