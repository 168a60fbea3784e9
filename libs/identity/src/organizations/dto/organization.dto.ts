import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { IfPresent, PLAN_FEATURES } from '#platform';
import type { OrganizationRow } from '../organization.schema.js';

export class OrganizationDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['sandbox', 'scale', 'governance', 'enterprise', 'custom'] }) plan: string;
  @ApiProperty({ type: [String], description: 'Features the plan unlocks.', example: ['friaWizard', 'sso'] })
  features: string[];
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Traces older than this many days are purged daily; null keeps them.',
  })
  traceRetentionDays: number | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

/**
 * The EU AI Act asks deployers to keep the logs of a high-risk system at least six months
 * (docs/compliance-officers.md, "Trace purge and retention"; test/trace-purge.e2e-spec.ts).
 */
export const MIN_TRACE_RETENTION_DAYS = 183;
export const MAX_TRACE_RETENTION_DAYS = 36_500;

export class UpdateOrganizationDto {
  @ApiPropertyOptional({ example: 'Analytical Engines Ltd', maxLength: 200 })
  @IfPresent()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: MIN_TRACE_RETENTION_DAYS,
    maximum: MAX_TRACE_RETENTION_DAYS,
    description:
      'Days traces are kept; the scheduler purges older ones daily. null keeps them for ever. At least 183 (the ' +
      'six months the EU AI Act asks deployers to keep logs). Owners and admins.',
  })
  @ValidateIf((_o, value) => value !== null)
  @IsOptional()
  @IsInt({ message: 'traceRetentionDays must be a whole number of days or null' })
  @Min(MIN_TRACE_RETENTION_DAYS, {
    message: `traceRetentionDays must be at least ${MIN_TRACE_RETENTION_DAYS} (six months) or null`,
  })
  @Max(MAX_TRACE_RETENTION_DAYS)
  traceRetentionDays?: number | null;
}

export function toOrganizationResponse(row: OrganizationRow): OrganizationDto {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    features: [...PLAN_FEATURES[row.plan]],
    traceRetentionDays: row.traceRetentionDays,
    createdAt: row.createdAt.toISOString(),
  };
}
