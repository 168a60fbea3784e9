import { Injectable } from '@nestjs/common';
import {
  type Actor,
  agentScopeOf,
  AppError,
  auditActorOf,
  canAccessAgent,
  Clock,
  isObjectId,
  newId,
  type Page,
  pageRequest,
  type RequestMeta,
  type SchemaVersion,
  toPage,
} from '#platform';
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
import type { IngestOutcome } from './ingest-outcome.js';
import { type TraceWrite, TraceWriter, unknownAgentError } from './trace-writer.js';
import { TracesRepository } from './traces.repository.js';

/** searchText holds prompt and output text up to this length: enough for similarity, bounded for the index. */
export const SEARCH_TEXT_MAX = 8000;

export interface IngestContext {
  /** The schema version in force for the request; its limits apply and it is stored on the trace. */
  schemaVersion: SchemaVersion;
  idempotencyKey?: string;
  meta?: RequestMeta;
}

const agentIdError = (message: string) => AppError.validation(message, [{ field: 'agentId', message }]);

@Injectable()
export class TracesService {
  constructor(
    private readonly repo: TracesRepository,
    private readonly policies: PolicySet,
    private readonly writer: TraceWriter,
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
    const agentId = this.resolveAgent(actor, input.agentId);
    return toIngestResponse(await this.ingest(actor, agentId, input, { ...ctx, idempotencyKey }));
  }

  /**
   * The agent a trace is recorded for: an agent key's own agent (a different body agentId is 403), or for
   * a workspace key the body's agentId, which is required and must lie in the key's scope. That the agent
   * exists in the caller's organization is checked where the trace is written, under the chain lock.
   */
  resolveAgent(actor: Actor, requested: string | undefined): string {
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
    if (!isObjectId(agentId)) throw unknownAgentError();
    return agentId;
  }

  /**
   * The ingest pipeline shared by POST /traces and OTLP: confidence (given, or estimated before policies),
   * policy evaluation, then the trace, the review item of a flagged trace and the audit entry, committed
   * together by the trace writer (which also settles the idempotency key). Blocked and flagged traces are
   * stored too.
   */
  async ingest(
    actor: Actor,
    agentId: string,
    input: TraceIngestInput,
    ctx: IngestContext,
  ): Promise<IngestOutcome> {
    return this.writer.write(actor.organizationId, await this.prepare(actor, agentId, input, ctx));
  }

  /** Stores traces prepared for one request together: all accepted, or none (503) when ingestion is saturated. */
  store(actor: Actor, writes: TraceWrite[]): Promise<IngestOutcome>[] {
    return this.writer.writeAll(actor.organizationId, writes);
  }

  /**
   * Everything decided before the database: confidence (given, or estimated before policies), policy evaluation,
   * and the rows to write (trace, review item of a flagged trace, audit entry).
   */
  async prepare(
    actor: Actor,
    agentId: string,
    input: TraceIngestInput,
    ctx: IngestContext,
  ): Promise<TraceWrite> {
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
    return {
      trace,
      reviewItem: reviewItemId
        ? {
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
          }
        : null,
      audit: {
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
      },
      idempotencyKey: ctx.idempotencyKey,
      keyId: actor.credential === 'jwt' ? null : (actor.keyId ?? null),
    };
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
