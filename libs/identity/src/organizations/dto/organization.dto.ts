import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
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
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Whom a person contests a decision with (an address, a URL, a department): shown as `contact` in the ' +
      'explanation of a decision (GET /traces/{id}/explanation). null until set.',
  })
  contestContact: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

/**
 * The EU AI Act asks deployers to keep the logs of a high-risk system at least six months
 * (docs/compliance-officers.md, "Trace purge and retention"; test/trace-purge.e2e-spec.ts).
 */
export const MIN_TRACE_RETENTION_DAYS = 183;
export const MAX_TRACE_RETENTION_DAYS = 36_500;
/** The length of `contest_contact` (organization.schema.ts). */
export const MAX_CONTEST_CONTACT_LENGTH = 500;

/**
 * At most `max` characters as PostgreSQL counts them in a varchar (code points): `@MaxLength` does not count
 * variation selectors, so a string it accepts could still be too long for the column.
 */
const MaxCharacters = (max: number): PropertyDecorator =>
  ValidateBy({
    name: 'maxCharacters',
    constraints: [max],
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || [...value].length <= max,
      defaultMessage: (args) => `${args?.property ?? 'value'} must be at most ${max} characters`,
    },
  });

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

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: MAX_CONTEST_CONTACT_LENGTH,
    example: 'Write to appeals@acme.example or to Acme Lending, Appeals, 1 Main Street, Dublin',
    description:
      'Whom a person contests a decision with (EU AI Act art. 86): free text, 1 to 500 characters after trimming; ' +
      'null clears it. Owners and admins.',
  })
  @ValidateIf((_o, value) => value !== undefined && value !== null)
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @IsNotEmpty({ message: 'contestContact must not be empty; send null to clear it' })
  @MaxCharacters(MAX_CONTEST_CONTACT_LENGTH)
  contestContact?: string | null;
}

export function toOrganizationResponse(row: OrganizationRow): OrganizationDto {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    features: [...PLAN_FEATURES[row.plan]],
    traceRetentionDays: row.traceRetentionDays,
    contestContact: row.contestContact,
    createdAt: row.createdAt.toISOString(),
  };
}
