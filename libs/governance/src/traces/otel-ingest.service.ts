import { Inject, Injectable } from '@nestjs/common';
import protobuf from 'protobufjs';
import type { Counter } from 'prom-client';
import { type Actor, APP_CONFIG, type AppConfig, AppError, assertSafeJson, Metrics } from '#platform';
import {
  decodeOtlpTraces,
  encodeExportTraceResponse,
  extractGenAiTraces,
  genAiLimitsOf,
  type OtlpEncoding,
  otlpEncodingOf,
  OtlpDecodeError,
  type OtlpTraceRequest,
  partialSuccess,
  type RejectedSpan,
} from '../otel/index.js';
import { validateTraceIngest } from './trace-ingest.validation.js';
import { type IngestContext, TraceIngestPipeline } from './trace-ingest.pipeline.js';
import type { TraceWrite } from './trace-writer.js';

export interface OtlpExportBody {
  body: Buffer | undefined;
  contentType: string;
  contentEncoding: string | undefined;
}

/** Status, media type and bytes (or JSON object) of an OTLP/HTTP reply. */
export interface OtlpHttpResponse {
  status: number;
  contentType: string;
  body: Buffer | Record<string, unknown>;
}

/** google.rpc.Status, the OTLP/HTTP error body (details are never sent). */
const StatusType = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'));

/** gRPC codes of google.rpc.Status for the HTTP statuses the endpoint answers. */
const GRPC_CODE: Record<number, number> = { 400: 3, 413: 8, 415: 3 };
const HTTP_STATUS: Record<OtlpDecodeError['code'], number> = {
  MALFORMED: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNSUPPORTED_ENCODING: 415,
  PAYLOAD_TOO_LARGE: 413,
};
const MAX_REASONS_IN_MESSAGE = 5;

function encodingOf(contentType: string): OtlpEncoding {
  try {
    return otlpEncodingOf(contentType);
  } catch {
    return 'json';
  }
}

function reply(encoding: OtlpEncoding, status: number, json: Record<string, unknown>): OtlpHttpResponse {
  if (encoding === 'protobuf') {
    const bytes =
      status === 200
        ? encodeExportTraceResponse(json)
        : StatusType.encode(StatusType.fromObject(json)).finish();
    return { status, contentType: 'application/x-protobuf', body: Buffer.from(bytes) };
  }
  return { status, contentType: 'application/json; charset=utf-8', body: json };
}

const reasonOf = (err: AppError) => err.details?.map((d) => d.message).join(', ') ?? err.message;

function rejectionMessage(rejected: RejectedSpan[]): string {
  const shown = rejected
    .slice(0, MAX_REASONS_IN_MESSAGE)
    .map((r) => `span ${r.spanId}: ${r.reason}`)
    .join('; ');
  const more =
    rejected.length > MAX_REASONS_IN_MESSAGE ? `; and ${rejected.length - MAX_REASONS_IN_MESSAGE} more` : '';
  return `${rejected.length} span(s) rejected: ${shown}${more}`;
}

/**
 * POST /otel/v1/traces: decodes an OTLP/HTTP export, keeps the GenAI spans and sends each through the same
 * ingest pipeline as POST /traces (validation under the schema version in force, policies, storage, audit).
 * Spans that cannot form a valid trace are counted in partialSuccess; blocked and flagged spans are accepted.
 */
@Injectable()
export class OtelIngestService {
  private readonly spansAccepted: Counter.Internal;
  private readonly spansRefused: Counter.Internal;

  constructor(
    private readonly pipeline: TraceIngestPipeline,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'bodyMaxInflateRatio'>,
    metrics: Metrics,
  ) {
    const spans = metrics.counter({
      name: 'governance_otlp_spans_total',
      help: 'OTLP spans received, by result (refused: reported rejected, or the export failed as a whole)',
      labelNames: ['result'],
    });
    this.spansAccepted = spans.labels('accepted');
    this.spansRefused = spans.labels('refused');
  }

  async export(actor: Actor, input: OtlpExportBody, ctx: IngestContext): Promise<OtlpHttpResponse> {
    const encoding = encodingOf(input.contentType);
    let request: OtlpTraceRequest;
    try {
      // Decompressed here, after authentication, by the platform's decoder under the same inflate ratio as
      // every other body.
      const options = { maxInflateRatio: this.config.bodyMaxInflateRatio };
      const bytes = input.body ?? Buffer.alloc(0);
      request = await decodeOtlpTraces(bytes, input.contentType, input.contentEncoding, options);
    } catch (err) {
      if (!(err instanceof OtlpDecodeError)) throw err;
      const status = HTTP_STATUS[err.code];
      return reply(encoding, status, { code: GRPC_CODE[status] ?? 3, message: err.message });
    }
    const limits = ctx.schemaVersion.limits;
    const extraction = extractGenAiTraces(request, {
      limits: genAiLimitsOf(limits),
    });
    const rejected = [...extraction.rejected];
    // Every span of the export: the GenAI ones and the others, which OTLP counts as accepted though not stored.
    const spans = extraction.traces.length + extraction.rejected.length + extraction.droppedNonGenAi;
    try {
      if (extraction.traces.length > 0) {
        const agentId = this.pipeline.resolveAgent(actor, undefined);
        const spanIdOf = (index: number) => {
          const spanId = extraction.traces[index]!.metadata.otelSpanId;
          return typeof spanId === 'string' ? spanId : `#${index}`;
        };
        const prepared: { index: number; write: TraceWrite }[] = [];
        for (const [index, candidate] of extraction.traces.entries()) {
          try {
            // Span attributes did not come through the JSON body guard: the same limits apply to them here.
            assertSafeJson(candidate, 'Span');
            const trace = validateTraceIngest(candidate, limits);
            prepared.push({ index, write: await this.pipeline.prepare(actor, agentId, trace, ctx) });
          } catch (err) {
            if (!(err instanceof AppError) || err.status !== 400) throw err;
            rejected.push({ spanId: spanIdOf(index), reason: reasonOf(err) });
          }
        }
        // The spans of one export are handed to the writer together: they share a commit, and are all refused
        // (503, or 413 for an export that could never fit) or all accepted.
        let pending: Promise<unknown>[];
        try {
          pending = this.pipeline.store(
            actor.organizationId,
            prepared.map((p) => p.write),
            'otlp',
          );
        } catch (err) {
          if (err instanceof AppError && err.status === 413) {
            this.spansRefused.inc(spans);
            return reply(encoding, 413, { code: GRPC_CODE[413]!, message: err.message });
          }
          throw err;
        }
        const outcomes = await Promise.allSettled(pending);
        const failures = outcomes.flatMap((outcome, i) =>
          outcome.status === 'rejected'
            ? [{ index: prepared[i]!.index, err: outcome.reason as unknown }]
            : [],
        );
        // Nothing stored: the export fails as a whole (a 401 for a key revoked meanwhile, a 503 to retry), which is
        // safe to retry. Once some spans are stored, a retry would store them twice: the others are reported.
        const storedAny = failures.length < outcomes.length;
        const fatal = failures.find(({ err }) => !(err instanceof AppError && err.status === 400));
        if (fatal && !storedAny) throw fatal.err;
        for (const { index, err } of failures) {
          rejected.push({
            spanId: spanIdOf(index),
            reason: err instanceof AppError ? reasonOf(err) : 'could not be stored',
          });
        }
      }
    } catch (err) {
      // The export fails as a whole (a key refused, ingestion unavailable): each of its spans was refused.
      this.spansRefused.inc(spans);
      throw err;
    }
    this.spansAccepted.inc(spans - rejected.length);
    this.spansRefused.inc(rejected.length);
    const body = partialSuccess(rejected.length, rejected.length ? rejectionMessage(rejected) : '');
    return reply(encoding, 200, body as Record<string, unknown>);
  }
}
