import { Body, Controller, Headers, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type Actor,
  CurrentActor,
  Endpoint,
  RawBodyRoute,
  RawResponse,
  ReqMeta,
  type RequestMeta,
  type SchemaVersion,
} from '#platform';
import { InForceSchemaVersion } from './schema-version.decorator.js';
import { OtelIngestService } from './otel-ingest.service.js';
import {
  OTLP_BODY,
  OTLP_HEADERS,
  OTLP_RESPONSES,
  TRACE_DOCS as DOCS,
  TRACE_ERRORS as ERRORS,
} from './traces.docs.js';

/**
 * OTLP batches (up to 512 spans by default, GenAI spans carrying whole conversations) outgrow the 1 MiB JSON
 * limit; the decoder separately caps the inflated size at 8 MiB.
 */
export const OTLP_MAX_BODY_BYTES = 4 * 1024 * 1024;

@ApiTags('OTLP')
@Controller('otel/v1')
export class OtelController {
  constructor(private readonly otel: OtelIngestService) {}

  @Post('traces')
  @HttpCode(200)
  @RawResponse()
  @RawBodyRoute(OTLP_MAX_BODY_BYTES)
  @Endpoint({
    summary: 'OTLP/HTTP trace export',
    description: DOCS.otlpExport,
    access: { via: ['agentKey'], write: true },
    consumes: ['application/json', 'application/x-protobuf'],
    produces: ['application/json', 'application/x-protobuf'],
    headers: OTLP_HEADERS,
    body: OTLP_BODY,
    responses: OTLP_RESPONSES,
    errors: [401, 403, 503],
    errorCodes: ERRORS.otlpExport,
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
