import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { OBJECT_ID_PATTERN, PaginationQueryDto } from '#platform';
import type { ApprovalPatternRow, ApprovalPatternStatus } from '../approval-pattern.schema.js';

export const PATTERN_STATUSES: ApprovalPatternStatus[] = ['observing', 'pending_signoff', 'active'];

export class ListApprovalPatternsQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: PATTERN_STATUSES, description: 'Only patterns in this state.' })
  @IsOptional()
  @IsIn(PATTERN_STATUSES, { message: `status must be one of ${PATTERN_STATUSES.join(', ')}` })
  status?: ApprovalPatternStatus;

  @ApiPropertyOptional({ description: 'Only this agent’s patterns.', pattern: OBJECT_ID_PATTERN.source })
  @IsOptional()
  @Matches(OBJECT_ID_PATTERN, { message: 'agentId must be an object id' })
  agentId?: string;
}

export class ApprovalPatternDto {
  @ApiProperty() id: string;
  @ApiProperty() agentId: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: '`outputDecision.action` of the traces, if any.',
  })
  action: string | null;
  @ApiProperty({ type: [String], description: 'Ids of the policies that flagged the traces, sorted.' })
  policyIds: string[];
  @ApiProperty({ enum: PATTERN_STATUSES }) status: ApprovalPatternStatus;
  @ApiProperty({ description: 'Review decisions (approve or reject) counted.' }) observations: number;
  @ApiProperty({ description: 'Of those, approvals.' }) approvals: number;
  @ApiProperty({ type: Number, nullable: true, description: 'approvals / observations, four decimals.' })
  approvalRate: number | null;
  @ApiProperty({ type: String, nullable: true }) signedOffBy: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) signedOffAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export function toApprovalPatternResponse(row: ApprovalPatternRow): ApprovalPatternDto {
  return {
    id: row.id,
    agentId: row.agentId,
    action: row.action,
    policyIds: row.policyIds,
    status: row.status,
    observations: row.observations,
    approvals: row.approvals,
    approvalRate:
      row.observations === 0 ? null : Math.round((row.approvals / row.observations) * 10_000) / 10_000,
    signedOffBy: row.signedOffBy,
    signedOffAt: row.signedOffAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
