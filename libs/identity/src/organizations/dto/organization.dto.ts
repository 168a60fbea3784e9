import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import {
  IfPresent,
  PII_ENTITIES,
  PII_MASKING_MODES,
  type PiiEntity,
  type PiiMaskingMode,
  PLAN_FEATURES,
} from '#platform';
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
  @ApiProperty({
    type: () => PiiMaskingDto,
    nullable: true,
    description:
      'Masking of personal data in trace content before it is stored ' +
      '(docs/data-protection.md, "Masking at ingestion"). null: off.',
  })
  piiMasking: PiiMaskingDto | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class PiiMaskingDto {
  @ApiProperty({
    enum: PII_ENTITIES,
    isArray: true,
    minItems: 1,
    description: 'The PII types masked, each at most once.',
    example: ['iban', 'creditCard', 'email'],
  })
  @IsArray()
  @ArrayNotEmpty({
    message: 'entities must name at least one PII type; send piiMasking: null to turn masking off',
  })
  @ArrayUnique({ message: 'entities must not repeat a type' })
  @IsIn(PII_ENTITIES, { each: true, message: `each of entities must be one of ${PII_ENTITIES.join(', ')}` })
  entities: PiiEntity[];

  @ApiProperty({
    enum: PII_MASKING_MODES,
    description:
      '`redact` writes `<IBAN>` in place of each value; `hash` writes `<IBAN:` and the first 12 hex of an HMAC of ' +
      'the value under a key of the organization `>`, so that equal values stay equal.',
  })
  @IsIn(PII_MASKING_MODES, { message: `mode must be one of ${PII_MASKING_MODES.join(', ')}` })
  mode: PiiMaskingMode;
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

  @ApiPropertyOptional({
    type: () => PiiMaskingDto,
    nullable: true,
    description:
      'Mask these PII types in the content of every trace stored from now on (prompt, output, tool calls, metadata, ' +
      'rationale); policies still see the original. null turns masking off. Owners and admins; audited ' +
      '`organization.pii_masking_updated`.',
  })
  @ValidateIf((_o, value) => value !== undefined && value !== null)
  @IsObject({ message: 'piiMasking must be an object {entities, mode} or null' })
  @ValidateNested()
  @Type(() => PiiMaskingDto)
  piiMasking?: PiiMaskingDto | null;
}

export function toOrganizationResponse(row: OrganizationRow): OrganizationDto {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    features: [...PLAN_FEATURES[row.plan]],
    traceRetentionDays: row.traceRetentionDays,
    contestContact: row.contestContact,
    piiMasking: row.piiMasking ? { entities: row.piiMasking.entities, mode: row.piiMasking.mode } : null,
    createdAt: row.createdAt.toISOString(),
  };
}
