import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { OBJECT_ID_PATTERN, PaginationQueryDto, PII_ENTITIES, type PiiEntity } from '#platform';
import type { ReviewItemRow, ReviewStatus } from '../review-item.schema.js';
import { FEEDBACK_DECISION } from '../review-items.repository.js';

export const REVIEW_STATUSES: ReviewStatus[] = ['pending', 'approved', 'rejected', 'escalated'];
export const REVIEW_DECISIONS = ['approve', 'reject', 'escalate'] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];
/** What closed an item: a reviewer's decision, or human feedback on its trace (POST /cpi/ingest). */
export const REVIEW_RESOLUTIONS = ['review', 'feedback'] as const;
export type ReviewResolution = (typeof REVIEW_RESOLUTIONS)[number];
export const NOTES_MAX_LENGTH = 4000;
export const BULK_MAX_IDS = 100;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class ListReviewQueueQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ description: 'Only this agent’s items.', pattern: OBJECT_ID_PATTERN.source })
  @IsOptional()
  @Matches(OBJECT_ID_PATTERN, { message: 'agentId must be an object id' })
  agentId?: string;

  @ApiPropertyOptional({ enum: REVIEW_STATUSES, default: 'pending' })
  @IsOptional()
  @IsIn(REVIEW_STATUSES, { message: `status must be one of ${REVIEW_STATUSES.join(', ')}` })
  status?: ReviewStatus;

  @ApiPropertyOptional({
    description: 'A user id, `me` for the caller, or `none` for unassigned items.',
    example: 'me',
  })
  @IsOptional()
  @Matches(/^(me|none|[0-9a-f]{24})$/, { message: 'assignedTo must be a user id, me or none' })
  assignedTo?: string;
}

export class ReviewDecisionDto {
  @ApiProperty({ enum: REVIEW_DECISIONS })
  @IsIn(REVIEW_DECISIONS, { message: `decision must be one of ${REVIEW_DECISIONS.join(', ')}` })
  decision: ReviewDecision;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: NOTES_MAX_LENGTH,
    description: 'The reviewer’s reasons, kept on the item; null or blank keeps none.',
  })
  @ValidateIf((o: ReviewDecisionDto) => o.notes !== undefined && o.notes !== null)
  @Transform(trim)
  @IsString()
  @MaxLength(NOTES_MAX_LENGTH)
  notes?: string | null;
}

export class BulkReviewDecisionDto extends ReviewDecisionDto {
  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: BULK_MAX_IDS,
    description: 'Review item ids, 1 to 100; repeated ids count once.',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(BULK_MAX_IDS)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  ids: string[];
}

export class AssignReviewItemDto {
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The user id of a member of the organization, or null to unassign.',
  })
  @ValidateIf((o: AssignReviewItemDto) => o.assignedTo !== null)
  @IsString()
  @Matches(OBJECT_ID_PATTERN, { message: 'assignedTo must be a user id or null' })
  assignedTo: string | null;
}

export class ReviewTraceExcerptDto {
  @ApiProperty({ description: 'The prompt, first 500 characters.' }) prompt: string;
  @ApiProperty({ description: 'The output text, first 500 characters.' }) text: string;
  @ApiProperty() confidence: number;
}

export class MatchedPolicyDto {
  @ApiProperty() policyId: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['block', 'flag'] }) outcome: 'block' | 'flag';
  @ApiPropertyOptional({
    enum: PII_ENTITIES,
    isArray: true,
    description:
      'The PII types its containsPii conditions found: types only, never the values. Absent when none did.',
  })
  piiEntities?: PiiEntity[];
}

export class ReviewItemDto {
  @ApiProperty() id: string;
  @ApiProperty() traceId: string;
  @ApiProperty() agentId: string;
  @ApiProperty({ enum: REVIEW_STATUSES }) status: ReviewStatus;
  @ApiProperty({ type: [MatchedPolicyDto] }) matchedPolicies: MatchedPolicyDto[];
  @ApiProperty({ type: String, nullable: true }) assignedTo: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: [...REVIEW_DECISIONS, null],
    description:
      'The decision that put the item in its status; for an item closed by feedback, the decision its status ' +
      'stands for (`approve` for approved, `reject` for rejected).',
  })
  decision: ReviewDecision | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: [...REVIEW_RESOLUTIONS, null],
    description:
      'What closed the item: `review` (a reviewer’s approve or reject) or `feedback` (POST /cpi/ingest on its ' +
      'trace: approve → `approved`, correct → `rejected`; `decidedBy` is then null and `notes` are the ' +
      'feedback’s); null while the item is pending or escalated.',
  })
  resolution: ReviewResolution | null;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The reviewer’s user id; null for an item closed by feedback (its audit entry names the key).',
  })
  decidedBy: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) decidedAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: ReviewTraceExcerptDto, nullable: true }) trace: ReviewTraceExcerptDto | null;
}

export class BulkFailureDto {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'ALREADY_DECIDED' }) code: string;
  @ApiProperty() error: string;
}

export class BulkDecisionResultDto {
  @ApiProperty({ type: [String], description: 'Ids decided.' }) processed: string[];
  @ApiProperty({ type: [BulkFailureDto] }) failed: BulkFailureDto[];
}

/** The item's decision as the API shows it, and what closed it (see ReviewItemDto). */
function shownDecision(row: ReviewItemRow): Pick<ReviewItemDto, 'decision' | 'resolution'> {
  if (row.decision === FEEDBACK_DECISION) {
    return { decision: row.status === 'approved' ? 'approve' : 'reject', resolution: 'feedback' };
  }
  const closed = row.status === 'approved' || row.status === 'rejected';
  return { decision: row.decision as ReviewDecision | null, resolution: closed ? 'review' : null };
}

export function toReviewItemResponse(
  row: ReviewItemRow,
  trace: { prompt: string; text: string; confidence: number } | undefined,
): ReviewItemDto {
  return {
    id: row.id,
    traceId: row.traceId,
    agentId: row.agentId,
    status: row.status,
    matchedPolicies: row.matchedPolicies,
    assignedTo: row.assignedTo,
    ...shownDecision(row),
    notes: row.notes,
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    trace: trace ? { prompt: trace.prompt, text: trace.text, confidence: trace.confidence } : null,
  };
}
