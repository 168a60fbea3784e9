import { Injectable } from '@nestjs/common';
import {
  type Actor,
  agentScopeOf,
  AppError,
  canAccessAgent,
  isObjectId,
  type Page,
  pageRequest,
  toPage,
} from '#platform';
import {
  type SimilarQueryDto,
  type SimilarTraceDto,
  type TraceDto,
  type TraceQueryDto,
  type TraceVerificationDto,
  toSimilarTraceResponse,
  toTraceResponse,
} from './dto/trace.dto.js';
import { type IngestResponse, toIngestResponse } from './dto/ingest-response.js';
import { type IngestContext, TraceIngestPipeline } from './trace-ingest.pipeline.js';
import { validateIdempotencyKey, validateTraceIngest } from './trace-ingest.validation.js';
import type { TraceRow } from './trace.schema.js';
import { decideContent } from './trace-content.js';
import { TraceContentRepository } from './trace-content.repository.js';
import { TracesRepository } from './traces.repository.js';

@Injectable()
export class TracesService {
  constructor(
    private readonly repo: TracesRepository,
    private readonly pipeline: TraceIngestPipeline,
    private readonly content: TraceContentRepository,
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
    const agentId = this.pipeline.resolveAgent(actor, input.agentId);
    const write = await this.pipeline.prepare(actor, agentId, input, { ...ctx, idempotencyKey });
    const [outcome] = this.pipeline.store(actor.organizationId, [write]);
    return toIngestResponse(await outcome!);
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

  /**
   * GET /traces/:id/verify: the stored content against the latest hash the chain records for it
   * (`TraceContentRepository.recordedContent`), decided by the same rule as the bulk check (`decideContent`).
   */
  async verify(actor: Actor, id: string): Promise<TraceVerificationDto> {
    let trace = await this.findVisible(actor, id);
    let recorded = await this.content.recordedContent(trace.organizationId, trace.id, trace.contentEntryId);
    if (recorded && recorded.id !== trace.contentEntryId) {
      // A CPI verdict may have committed between the two reads (its entry, and the trace's new content and pointer,
      // commit together): read the trace once more. Still apart, the pointer was moved.
      trace = await this.findVisible(actor, id);
      recorded = await this.content.recordedContent(trace.organizationId, trace.id, trace.contentEntryId);
    }
    return {
      traceId: trace.id,
      status: decideContent(trace, recorded),
      auditEntryId: recorded?.id ?? null,
      contentHash: recorded?.hash ?? null,
    };
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
