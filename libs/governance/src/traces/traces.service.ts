import { Injectable } from '@nestjs/common';
import {
  type Actor,
  agentScopeOf,
  AppError,
  AuditLog,
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
import { contentStatusOf } from './trace-content.js';
import { TracesRepository } from './traces.repository.js';

@Injectable()
export class TracesService {
  constructor(
    private readonly repo: TracesRepository,
    private readonly pipeline: TraceIngestPipeline,
    private readonly audit: AuditLog,
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
   * GET /traces/:id/verify: the stored content against the hash its audit entry records. The entry must be one of the
   * organization's, about this trace, and carry a hash; anything else is `altered` (an entry id rewritten to dodge
   * the check), unless the trace predates content hashing (no salt, no entry) or was erased.
   */
  async verify(actor: Actor, id: string): Promise<TraceVerificationDto> {
    const trace = await this.findVisible(actor, id);
    const [entry] = trace.contentEntryId ? await this.audit.byIds([trace.contentEntryId]) : [];
    const recorded =
      entry &&
      entry.organizationId === trace.organizationId &&
      entry.targetType === 'trace' &&
      entry.targetId === trace.id &&
      typeof entry.metadata.contentHash === 'string'
        ? entry.metadata.contentHash
        : null;
    const hashed = trace.contentSalt !== null || trace.contentEntryId !== null;
    return {
      traceId: trace.id,
      status: recorded === null && hashed && !trace.erasedAt ? 'altered' : contentStatusOf(trace, recorded),
      auditEntryId: recorded === null ? null : entry!.id,
      contentHash: recorded,
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
