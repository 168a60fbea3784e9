import { Body, Controller, Get, Headers, Param, Post, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  type Page,
  Permission,
  RawBody,
  ReqMeta,
  type RequestMeta,
  type SchemaVersion,
} from '#platform';
import { IngestResultDto, IngestTraceDto } from './dto/ingest-trace.dto.js';
import {
  SimilarQueryDto,
  SimilarTraceDto,
  TraceDto,
  TraceQueryDto,
  TraceVerificationDto,
} from './dto/trace.dto.js';
import { InForceSchemaVersion } from './schema-version.decorator.js';
import { INGEST_ANSWERS, INGEST_HEADERS, TRACE_DOCS as DOCS, TRACE_ERRORS as ERRORS } from './traces.docs.js';
import { TracesService } from './traces.service.js';

@ApiTags('Traces')
@Controller('traces')
@ApiErrors([401])
export class TracesController {
  constructor(private readonly traces: TracesService) {}

  @Post()
  @Endpoint({
    summary: 'Ingest a decision trace',
    description: DOCS.ingest,
    access: { via: ['agentKey', 'workspaceKey'], write: true },
    body: { type: IngestTraceDto },
    headers: INGEST_HEADERS,
    success: { model: IngestResultDto, status: 201, description: 'Approved (status `approved`).' },
    ...INGEST_ANSWERS,
    errors: [400, 413, 503],
    errorCodes: ERRORS.ingest,
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
  @Endpoint({
    summary: 'List traces',
    description: DOCS.list,
    access: { via: ['jwt', 'workspaceKey'], roles: Permission.read },
    success: { model: TraceDto, paginated: true },
    errors: [400, 403],
  })
  list(@CurrentActor() actor: Actor, @Query() query: TraceQueryDto): Promise<Page<TraceDto>> {
    return this.traces.list(actor, query);
  }

  @Get(':id/similar')
  @Endpoint({
    summary: 'Traces similar to one trace',
    description: DOCS.similar,
    access: { via: ['jwt', 'workspaceKey'], roles: Permission.read },
    success: { model: SimilarTraceDto, isArray: true },
    errors: [400, 403, 404],
  })
  similar(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: SimilarQueryDto,
  ): Promise<SimilarTraceDto[]> {
    return this.traces.similar(actor, id, query);
  }

  @Get(':id/verify')
  @Endpoint({
    summary: 'Check a trace’s stored content against its audit entry',
    description: DOCS.verify,
    access: { via: ['jwt', 'workspaceKey'], roles: Permission.read },
    success: TraceVerificationDto,
    errors: [403, 404],
  })
  verify(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<TraceVerificationDto> {
    return this.traces.verify(actor, id);
  }

  @Get(':id')
  @Endpoint({
    summary: 'One trace',
    description: DOCS.get,
    access: { via: ['jwt', 'workspaceKey'], roles: Permission.read },
    success: TraceDto,
    errors: [403, 404],
  })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<TraceDto> {
    return this.traces.get(actor, id);
  }
}
