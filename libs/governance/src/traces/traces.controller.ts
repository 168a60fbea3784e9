import { Body, Controller, Get, Headers, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiExtraModels,
  ApiHeader,
  ApiOperation,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  ErrorEnvelopeDto,
  type Page,
  Permission,
  RawBody,
  ReqMeta,
  type RequestMeta,
  type SchemaVersion,
} from '#platform';
import {
  BlockedEnvelopeDto,
  DuplicateEnvelopeDto,
  FlaggedEnvelopeDto,
  IngestResultDto,
  IngestTraceDto,
} from './dto/ingest-trace.dto.js';
import { SimilarQueryDto, SimilarTraceDto, TraceDto, TraceQueryDto } from './dto/trace.dto.js';
import { InForceSchemaVersion } from './schema-version.decorator.js';
import { TracesService } from './traces.service.js';

@ApiTags('Traces')
@Controller('traces')
@ApiErrors([401])
export class TracesController {
  constructor(private readonly traces: TracesService) {}

  @Post()
  @Access({ via: ['agentKey', 'workspaceKey'], write: true })
  @ApiOperation({
    summary: 'Ingest a decision trace',
    description:
      'Agent key (svc_agent_): the trace is recorded for the key’s agent; a body `agentId` must equal it (else 403). ' +
      'A writable workspace key may ingest too, with `agentId` required and inside its scope. The body is validated ' +
      'with the limits of the schema version in force (X-Svc-Version; byte limits on the UTF-8 JSON encoding). ' +
      'Confidence, when absent, is estimated from the output text before policies run. Every outcome is stored with ' +
      'one audit entry (trace.approved | trace.flagged | trace.blocked); a flagged trace gets a pending review item. ' +
      'Idempotency-Key (≤ 255 characters) is honoured per organization for 24 hours. The answer comes once the trace ' +
      'has committed; traces arriving together are committed together (group commit).',
  })
  @ApiBody({ type: IngestTraceDto })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      '1–255 characters; a repeat within 24 hours answers 409 SVC_DUPLICATE_REQUEST with the first trace id.',
  })
  @ApiHeader({
    name: 'X-Svc-Version',
    required: false,
    description: 'Schema version (YYYY-MM-DD); default latest.',
  })
  @ApiEnvelope(IngestResultDto, { status: 201, description: 'Approved (status `approved`).' })
  @ApiExtraModels(FlaggedEnvelopeDto, BlockedEnvelopeDto, DuplicateEnvelopeDto, ErrorEnvelopeDto)
  @ApiResponse({
    status: 202,
    description: 'Flagged for review: code SVC_FLAGGED_FOR_REVIEW, with the review item id.',
    schema: { $ref: getSchemaPath(FlaggedEnvelopeDto) },
  })
  @ApiResponse({
    status: 403,
    description:
      'SVC_BLOCKED_BY_POLICY (trace stored as blocked; `data` names the policies), or FORBIDDEN (key kind, agentId ' +
      'not the key’s agent or outside the key’s scope, read-only key).',
    schema: {
      anyOf: [{ $ref: getSchemaPath(BlockedEnvelopeDto) }, { $ref: getSchemaPath(ErrorEnvelopeDto) }],
    },
  })
  @ApiResponse({
    status: 409,
    description:
      'SVC_DUPLICATE_REQUEST: the Idempotency-Key was used within 24 hours; `data.id` is the first trace.',
    schema: { $ref: getSchemaPath(DuplicateEnvelopeDto) },
  })
  @ApiErrors([400, 413, 503], {
    400: 'VALIDATION_ERROR (`details` names each field over its limit or missing; bad Idempotency-Key), VERSION_UNSUPPORTED',
    503: 'SERVICE_UNAVAILABLE: more traces wait to be written than INGEST_MAX_PENDING; nothing was stored, retry after Retry-After seconds',
  })
  async ingest(
    @CurrentActor() actor: Actor,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @InForceSchemaVersion() schemaVersion: SchemaVersion,
    @ReqMeta() meta: RequestMeta,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RawBody> {
    const result = await this.traces.ingestRequest(actor, body, idempotencyKey, { schemaVersion, meta });
    reply.status(result.status);
    return new RawBody(result.body);
  }

  @Get()
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.read })
  @ApiOperation({
    summary: 'List traces',
    description:
      'Newest first. Filters agentId, status (approved, flagged, blocked, success), from/to (ISO 8601). page default 1; ' +
      'limit default 20, values above 100 are clamped to 100. A workspace key scoped to agents sees only theirs.',
  })
  @ApiEnvelope(TraceDto, { paginated: true })
  @ApiErrors([400, 403])
  list(@CurrentActor() actor: Actor, @Query() query: TraceQueryDto): Promise<Page<TraceDto>> {
    return this.traces.list(actor, query);
  }

  @Get(':id/similar')
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.read })
  @ApiOperation({
    summary: 'Traces similar to one trace',
    description:
      'Trigram similarity (pg_trgm) of prompt and output text within the organization, most similar first, the ' +
      'trace itself excluded; only traces with similarity ≥ 0.2. limit default 5, max 20.',
  })
  @ApiEnvelope(SimilarTraceDto, { isArray: true })
  @ApiErrors([400, 403, 404])
  similar(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: SimilarQueryDto,
  ): Promise<SimilarTraceDto[]> {
    return this.traces.similar(actor, id, query);
  }

  @Get(':id')
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.read })
  @ApiOperation({
    summary: 'One trace',
    description: 'Traces of another organization (or outside a key’s scope) answer 404.',
  })
  @ApiEnvelope(TraceDto)
  @ApiErrors([403, 404])
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<TraceDto> {
    return this.traces.get(actor, id);
  }
}
