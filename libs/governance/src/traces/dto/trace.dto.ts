import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { PaginationQueryDto } from '#platform';
import type { SimilarTraceRow } from '../traces.repository.js';
import type { TraceRow, TraceStatus } from '../trace.schema.js';
import { CONTENT_STATUSES, type ContentStatus } from '../trace-content.js';
import { InputContextDto, OutputDecisionDto, PolicyResultDto } from './ingest-trace.dto.js';

export const TRACE_STATUSES: readonly TraceStatus[] = ['approved', 'flagged', 'blocked', 'success'];

export class TraceQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ description: 'Traces of this agent only.' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  agentId?: string;

  @ApiPropertyOptional({ enum: TRACE_STATUSES })
  @IsOptional()
  @IsIn(TRACE_STATUSES)
  status?: TraceStatus;

  @ApiPropertyOptional({ format: 'date-time', description: 'Traces created at or after this instant.' })
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Traces created at or before this instant.' })
  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;
}

export class SimilarQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 20, default: 5 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(20)
  limit?: number;
}

/** A stored trace's output: as ingested, plus what human feedback (CPI) set on it. */
export class TraceOutputDecisionDto extends OutputDecisionDto {
  @ApiPropertyOptional({ description: 'The decision a human set by correcting the trace (CPI feedback).' })
  decision?: string;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'After a correction: the decision before the first one (the agent’s action).',
  })
  originalDecision?: string | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'After a correction: the reviewer’s notes.',
  })
  correctionNotes?: string | null;
  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: 'After a correction that gave one.' })
  correctedConfidence?: number;
}

export class TraceDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() agentId: string;
  @ApiProperty({ enum: TRACE_STATUSES }) status: TraceStatus;
  @ApiProperty() confidence: number;
  @ApiProperty({
    type: InputContextDto,
    nullable: true,
    description: 'As ingested; null once the subject’s content was erased (`erasedAt`).',
  })
  inputContext: Record<string, unknown> | null;
  @ApiProperty({
    type: TraceOutputDecisionDto,
    nullable: true,
    description: 'As ingested, with what feedback set; null once erased.',
  })
  outputDecision: Record<string, unknown> | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    properties: {
      autoApprovedBy: { type: 'string', description: 'The approval pattern that approved a flagged trace.' },
      approvedBy: {
        type: 'string',
        description: 'After CPI approval: the approver’s e-mail, or `apiKey:<id>`.',
      },
      approvedAt: { type: 'string', format: 'date-time', description: 'After CPI approval.' },
    },
    nullable: true,
    description:
      'The caller’s metadata as sent (any JSON object), and the members the service sets: `autoApprovedBy`, ' +
      '`approvedBy`, `approvedAt`. Null once erased.',
  })
  metadata: Record<string, unknown> | null;
  @ApiProperty({ type: 'string', nullable: true }) rationale: string | null;
  @ApiProperty({ example: '2026-04-11', description: 'Schema version in force at ingestion.' })
  schemaVersion: string;
  @ApiProperty() humanOverride: boolean;
  @ApiProperty({ type: [PolicyResultDto], description: 'Policies that matched.' })
  policyResults: PolicyResultDto[];
  @ApiProperty({ type: 'string', nullable: true }) reviewItemId: string | null;
  @ApiProperty({
    description:
      'Whether the trace was sent with a `subjectRef`. The reference itself is stored only as an HMAC and never ' +
      'returned.',
  })
  hasSubject: boolean;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      'The random salt (32 hex) of the content hash in the trace’s audit entry: with it, the content can be checked ' +
      'against an audit export offline (packages/audit-verify). Null for traces stored before content hashing and ' +
      'once erased.',
  })
  contentSalt: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 1 },
    nullable: true,
    example: { iban: 1, email: 2 },
    description:
      'How many values of each PII type masking replaced in the content before it was stored (PATCH ' +
      '/organizations/current `piiMasking`): `{}` when masking was on and found none, null when it was off.',
  })
  piiMasked: Record<string, number> | null;
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      'When the subject’s content was erased (POST /subjects/{ref}/erasure); null while it is held.',
  })
  erasedAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class TraceVerificationDto {
  @ApiProperty() traceId: string;
  @ApiProperty({
    enum: CONTENT_STATUSES,
    description:
      '`intact`, `altered` (changed outside the service), `erased` (the subject’s content was erased), `unhashed` ' +
      '(stored before content hashing).',
  })
  status: ContentStatus;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The audit entry whose `metadata.contentHash` the content was checked against.',
  })
  auditEntryId: string | null;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The hash that entry records (64 hex); null when there is none.',
  })
  contentHash: string | null;
}

export class SimilarTraceDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: TRACE_STATUSES }) status: TraceStatus;
  @ApiProperty() confidence: number;
  @ApiProperty({ minimum: 0, maximum: 1, description: 'pg_trgm similarity of prompt and output text.' })
  similarity: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ description: 'First 200 characters of the prompt and output text.' }) excerpt: string;
}

/** A trace as the API answers it; internal columns (searchText) never leave the service. */
export function toTraceResponse(row: TraceRow): TraceDto {
  return {
    id: row.id,
    organizationId: row.organizationId,
    agentId: row.agentId,
    status: row.status,
    confidence: row.confidence,
    inputContext: row.inputContext,
    outputDecision: row.outputDecision,
    metadata: row.metadata,
    rationale: row.rationale,
    schemaVersion: row.schemaVersion,
    humanOverride: row.humanOverride,
    policyResults: row.policyResults,
    reviewItemId: row.reviewItemId,
    hasSubject: row.subjectHash !== null,
    contentSalt: row.contentSalt,
    piiMasked: row.piiMasked ?? null,
    erasedAt: row.erasedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toSimilarTraceResponse(row: SimilarTraceRow): SimilarTraceDto {
  return {
    id: row.id,
    status: row.status,
    confidence: row.confidence,
    similarity: Math.round(row.similarity * 1000) / 1000,
    createdAt: row.createdAt.toISOString(),
    excerpt: row.excerpt,
  };
}
