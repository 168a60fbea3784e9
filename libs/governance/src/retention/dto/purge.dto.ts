import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsISO8601, IsString, MaxLength } from 'class-validator';
import { IfPresent } from '#platform';
import type { TraceStatus } from '../../traces/trace.schema.js';

const STATUSES: readonly TraceStatus[] = ['approved', 'flagged', 'blocked', 'success'];

/** Every filter present must be valid: a null filter is refused (400), never read as "no filter", which would widen the purge. */
export class PurgeTracesDto {
  @ApiProperty({ format: 'date-time', description: 'Traces created before this instant (exclusive).' })
  @IsISO8601({ strict: true }, { message: 'before must be an ISO 8601 date-time' })
  before: string;

  @ApiPropertyOptional({ description: 'Only this agent’s traces.' })
  @IfPresent()
  @IsString()
  @MaxLength(64)
  agentId?: string;

  @ApiPropertyOptional({ enum: STATUSES, description: 'Only traces with this status.' })
  @IfPresent()
  @IsIn(STATUSES, { message: `status must be one of ${STATUSES.join(', ')}` })
  status?: TraceStatus;

  @ApiPropertyOptional({ default: false, description: 'true: count what would be purged, delete nothing.' })
  @IfPresent()
  @IsBoolean()
  dryRun?: boolean;
}

export class PurgeResultDto {
  @ApiProperty({ description: 'Traces the filter matched.' }) matched: number;
  @ApiProperty({ description: 'Traces deleted (0 for a dry run).' }) purged: number;
}
