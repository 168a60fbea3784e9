import {
  type ApiBodyOptions,
  type ApiHeaderOptions,
  type ApiResponseOptions,
  getSchemaPath,
} from '@nestjs/swagger';
import { type EndpointDoc, ErrorEnvelopeDto } from '#platform';
import { BlockedEnvelopeDto, DuplicateEnvelopeDto, FlaggedEnvelopeDto } from './dto/ingest-trace.dto.js';

/** The OpenAPI text of the traces routes (traces.controller.ts, otel.controller.ts), kept out of the controllers. */

export const TRACE_DOCS = {
  ingest:
    'Agent key (svc_agent_): the trace is recorded for the key’s agent; a body `agentId` must equal it (else 403). ' +
    'A writable workspace key may ingest too, with `agentId` required and inside its scope. The body is validated ' +
    'with the limits of the schema version in force (X-Svc-Version; byte limits on the UTF-8 JSON encoding). ' +
    'Confidence, when absent, is estimated from the output text before policies run. Every outcome is stored with ' +
    'one audit entry (trace.approved | trace.flagged | trace.blocked); a flagged trace gets a pending review item. ' +
    'Idempotency-Key (≤ 255 characters) is honoured per organization for 24 hours. The answer comes once the trace ' +
    'has committed; traces arriving together are committed together (group commit).',
  list:
    'Newest first. Filters agentId, status (approved, flagged, blocked, success), from/to (ISO 8601). page default 1; ' +
    'limit default 20, values above 100 are clamped to 100. A workspace key scoped to agents sees only theirs.',
  similar:
    'Trigram similarity (pg_trgm) of prompt and output text within the organization, most similar first, the ' +
    'trace itself excluded; only traces with similarity ≥ 0.2. limit default 5, max 20.',
  get: 'Traces of another organization (or outside a key’s scope) answer 404.',
  verify:
    'Checks the trace’s stored content (inputContext, outputDecision, metadata, rationale) against the content hash ' +
    'its audit entry records: SHA-256 over the trace’s random salt and the RFC 8785 canonical form of the content. ' +
    'The entry is the trace’s own ingestion entry, or the entry of the last CPI verdict that changed the content. ' +
    '`intact`: the content is what was recorded; `altered`: it was changed outside the service (or its salt or entry ' +
    'is gone); `erased`: the subject’s content was erased (POST /subjects/{ref}/erasure), so there is nothing to ' +
    'check; `unhashed`: the trace was stored before content hashing, and nothing can be said of its content. The ' +
    'chain itself is checked by GET /audit/verify.',
  otlpExport:
    'OTLP/HTTP ExportTraceServiceRequest as application/json or application/x-protobuf, optionally ' +
    '`Content-Encoding: gzip` (body ≤ 4 MiB as sent, ≤ 8 MiB inflated; a larger body answers 413 PAYLOAD_TOO_LARGE). Only generative-AI spans ' +
    '(gen_ai.operation.name, gen_ai.provider.name or gen_ai.system) are kept, others are dropped silently; each ' +
    'kept span goes through the POST /traces pipeline (validation under the schema version in force, policies, ' +
    'storage, audit) for the key’s agent. The reply uses the request’s encoding: ExportTraceServiceResponse whose ' +
    'partialSuccess counts the rejected spans with their reasons (blocked and flagged spans are accepted). An ' +
    'undecodable body answers 400 (413 too large, 415 unsupported Content-Type or Content-Encoding) with a ' +
    'google.rpc.Status `{code, message}` in the request’s encoding. Authentication and version errors keep the ' +
    'standard JSON error envelope.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const TRACE_ERRORS = {
  ingest: {
    400: 'VALIDATION_ERROR (`details` names each field over its limit or missing; bad Idempotency-Key), VERSION_UNSUPPORTED',
    503: 'SERVICE_UNAVAILABLE: more traces wait to be written than INGEST_MAX_PENDING; nothing was stored, retry after Retry-After seconds',
  },
  otlpExport: {
    503: 'SERVICE_UNAVAILABLE: the export’s spans would take ingestion past INGEST_MAX_PENDING; none was stored, retry after Retry-After seconds',
  },
} as const;

export const INGEST_HEADERS: readonly ApiHeaderOptions[] = [
  {
    name: 'Idempotency-Key',
    required: false,
    description:
      '1–255 characters; a repeat within 24 hours answers 409 SVC_DUPLICATE_REQUEST with the first trace id.',
  },
  {
    name: 'X-Svc-Version',
    required: false,
    description: 'Schema version (YYYY-MM-DD); default latest.',
  },
];

/** The ingestion's answers besides the approved one: flagged, blocked and duplicate, each in its own envelope. */
export const INGEST_ANSWERS: Pick<EndpointDoc, 'models' | 'responses'> = {
  models: [FlaggedEnvelopeDto, BlockedEnvelopeDto, DuplicateEnvelopeDto, ErrorEnvelopeDto],
  responses: [
    {
      status: 202,
      description: 'Flagged for review: code SVC_FLAGGED_FOR_REVIEW, with the review item id.',
      schema: { $ref: getSchemaPath(FlaggedEnvelopeDto) },
    },
    {
      status: 403,
      description:
        'SVC_BLOCKED_BY_POLICY (trace stored as blocked; `data` names the policies), or FORBIDDEN (key kind, agentId ' +
        'not the key’s agent or outside the key’s scope, read-only key).',
      schema: {
        anyOf: [{ $ref: getSchemaPath(BlockedEnvelopeDto) }, { $ref: getSchemaPath(ErrorEnvelopeDto) }],
      },
    },
    {
      status: 409,
      description:
        'SVC_DUPLICATE_REQUEST: the Idempotency-Key was used within 24 hours; `data.id` is the first trace.',
      schema: { $ref: getSchemaPath(DuplicateEnvelopeDto) },
    },
  ],
};

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

export const OTLP_HEADERS: readonly ApiHeaderOptions[] = [
  { name: 'Content-Encoding', required: false, description: 'gzip or identity.' },
];

export const OTLP_BODY: ApiBodyOptions = {
  description: 'ExportTraceServiceRequest (OTLP/JSON or protobuf).',
  schema: { type: 'object', properties: { resourceSpans: { type: 'array', items: { type: 'object' } } } },
};

/** The OTLP answers: the protocol's own messages in the request's encoding, not the envelope. */
export const OTLP_RESPONSES: readonly ApiResponseOptions[] = [
  {
    status: 200,
    description: 'Accepted; partialSuccess counts rejected spans.',
    content: {
      'application/json': { schema: PARTIAL_SUCCESS_SCHEMA },
      'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
    },
  },
  {
    status: 400,
    description: 'Malformed OTLP body (google.rpc.Status), or VERSION_UNSUPPORTED (error envelope).',
    content: {
      'application/json': { schema: STATUS_SCHEMA },
      'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
    },
  },
  {
    status: 413,
    description:
      'Body too large, or more GenAI spans than ingestion accepts at once (INGEST_MAX_PENDING): split the export ' +
      '(google.rpc.Status, code 8).',
    content: { 'application/json': { schema: STATUS_SCHEMA } },
  },
  {
    status: 415,
    description: 'Unsupported Content-Type or Content-Encoding (google.rpc.Status).',
    content: { 'application/json': { schema: STATUS_SCHEMA } },
  },
];
