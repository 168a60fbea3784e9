import { Body, Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiHeader,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  Access,
  type Actor,
  ApiErrors,
  CurrentActor,
  RawBodyRoute,
  RawResponse,
  ReqMeta,
  type RequestMeta,
  type SchemaVersion,
} from '#platform';
import { InForceSchemaVersion } from './schema-version.decorator.js';
import { OtelIngestService } from './otel-ingest.service.js';

/**
 * OTLP batches (up to 512 spans by default, GenAI spans carrying whole conversations) outgrow the 1 MiB JSON
 * limit; the decoder separately caps the inflated size at 8 MiB.
 */
export const OTLP_MAX_BODY_BYTES = 4 * 1024 * 1024;

const PARTIAL_SUCCESS_SCHEMA = {
  type: 'object',
  description: 'ExportTraceServiceResponse; `{}` when every span was accepted.',
  properties: {
    partialSuccess: {
      type: 'object',
      properties: {
        rejectedSpans: { type: 'integer', description: 'GenAI spans that could not form a valid trace.' },
        errorMessage: { type: 'string', description: 'Reason per rejected span (first five).' },
      },
    },
  },
} as const;

const STATUS_SCHEMA = {
  type: 'object',
  description: 'google.rpc.Status (protobuf-encoded for application/x-protobuf requests).',
  properties: { code: { type: 'integer', example: 3 }, message: { type: 'string' } },
} as const;

@ApiTags('OTLP')
@Controller('otel/v1')
export class OtelController {
  constructor(private readonly otel: OtelIngestService) {}

  @Post('traces')
  @HttpCode(200)
  @RawResponse()
  @RawBodyRoute(OTLP_MAX_BODY_BYTES)
  @Access({ via: ['agentKey'], write: true })
  @ApiOperation({
    summary: 'OTLP/HTTP trace export',
    description:
      'OTLP/HTTP ExportTraceServiceRequest as application/json or application/x-protobuf, optionally ' +
      '`Content-Encoding: gzip` (body ≤ 4 MiB as sent, ≤ 8 MiB inflated; a larger body answers 413 PAYLOAD_TOO_LARGE). Only generative-AI spans ' +
      '(gen_ai.operation.name, gen_ai.provider.name or gen_ai.system) are kept, others are dropped silently; each ' +
      'kept span goes through the POST /traces pipeline (validation under the schema version in force, policies, ' +
      'storage, audit) for the key’s agent. The reply uses the request’s encoding: ExportTraceServiceResponse whose ' +
      'partialSuccess counts the rejected spans with their reasons (blocked and flagged spans are accepted). An ' +
      'undecodable body answers 400 (413 too large, 415 unsupported Content-Type or Content-Encoding) with a ' +
      'google.rpc.Status `{code, message}` in the request’s encoding. Authentication and version errors keep the ' +
      'standard JSON error envelope.',
  })
  @ApiConsumes('application/json', 'application/x-protobuf')
  @ApiProduces('application/json', 'application/x-protobuf')
  @ApiHeader({ name: 'Content-Encoding', required: false, description: 'gzip or identity.' })
  @ApiBody({
    description: 'ExportTraceServiceRequest (OTLP/JSON or protobuf).',
    schema: { type: 'object', properties: { resourceSpans: { type: 'array', items: { type: 'object' } } } },
  })
  @ApiResponse({
    status: 200,
    description: 'Accepted; partialSuccess counts rejected spans.',
    content: {
      'application/json': { schema: PARTIAL_SUCCESS_SCHEMA },
      'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
    },
  })
  @ApiResponse({
    status: 400,
    description: 'Malformed OTLP body (google.rpc.Status), or VERSION_UNSUPPORTED (error envelope).',
    content: {
      'application/json': { schema: STATUS_SCHEMA },
      'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
    },
  })
  @ApiResponse({
    status: 413,
    description:
      'Body too large, or more GenAI spans than ingestion accepts at once (INGEST_MAX_PENDING): split the export ' +
      '(google.rpc.Status, code 8).',
    content: { 'application/json': { schema: STATUS_SCHEMA } },
  })
  @ApiResponse({
    status: 415,
    description: 'Unsupported Content-Type or Content-Encoding (google.rpc.Status).',
    content: { 'application/json': { schema: STATUS_SCHEMA } },
  })
  @ApiErrors([401, 403, 503], {
    503: 'SERVICE_UNAVAILABLE: the export’s spans would take ingestion past INGEST_MAX_PENDING; none was stored, retry after Retry-After seconds',
  })
  async export(
    @CurrentActor() actor: Actor,
    @Body() body: Buffer | undefined,
    @Req() request: FastifyRequest,
    @Headers('content-encoding') contentEncoding: string | undefined,
    @InForceSchemaVersion() schemaVersion: SchemaVersion,
    @ReqMeta() meta: RequestMeta,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer | Record<string, unknown>> {
    const result = await this.otel.export(
      actor,
      { body, contentType: request.rawContentType ?? '', contentEncoding },
      { schemaVersion, meta },
    );
    reply.status(result.status).type(result.contentType);
    return result.body;
  }
}
