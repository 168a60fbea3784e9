import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsEmail,
  IsIn,
  IsISO8601,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { IfPresent, PaginationQueryDto } from '#platform';
import type { ReportFrequency, ScheduledReportRow } from '../scheduled-report.schema.js';

export const REPORT_FREQUENCIES: readonly ReportFrequency[] = ['daily', 'weekly', 'monthly'];
export const REPORT_NAME_MAX = 120;
export const RECIPIENTS_MAX = 20;
/** The longest list accepted before de-duplication; more than this is certainly a mistake. */
const RECIPIENTS_RAW_MAX = 200;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** Recipients trimmed, lower-cased and de-duplicated (first occurrence kept) before they are validated. */
const recipientsTransform = ({ value }: { value: unknown }) => {
  if (!Array.isArray(value) || value.length > RECIPIENTS_RAW_MAX) return value;
  if (!value.every((v) => typeof v === 'string')) return value;
  return [...new Set((value as string[]).map((v) => v.trim().toLowerCase()))];
};

/** The recipients' rules, shared by create and update: 1 to 20 valid addresses once de-duplicated. */
function Recipients(): PropertyDecorator {
  return applyDecorators(
    Transform(recipientsTransform),
    IsArray(),
    ArrayMinSize(1, { message: 'recipients must list at least 1 address' }),
    ArrayMaxSize(RECIPIENTS_MAX, { message: `recipients must list at most ${RECIPIENTS_MAX} addresses` }),
    IsString({ each: true }),
    MaxLength(254, { each: true }),
    IsEmail({}, { each: true, message: 'each recipient must be a valid e-mail address' }),
  );
}

const FREQUENCY_MESSAGE = `frequency must be one of ${REPORT_FREQUENCIES.join(', ')}`;

export class CreateScheduledReportDto {
  @ApiProperty({ minLength: 1, maxLength: REPORT_NAME_MAX, description: 'Trimmed.' })
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(REPORT_NAME_MAX)
  name: string;

  @ApiProperty({ enum: REPORT_FREQUENCIES })
  @IsIn(REPORT_FREQUENCIES, { message: FREQUENCY_MESSAGE })
  frequency: ReportFrequency;

  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: RECIPIENTS_MAX,
    example: ['compliance@example.com'],
    description: 'E-mail addresses, lower-cased and de-duplicated; 1 to 20 after de-duplication.',
  })
  @Recipients()
  recipients: string[];

  @ApiPropertyOptional({
    default: true,
    description: 'Volume by status, average confidence, review backlog.',
  })
  @IfPresent()
  @IsBoolean()
  includeMetrics?: boolean;

  @ApiPropertyOptional({
    default: true,
    description: 'The 5 agents with most traces, with flag and block rates.',
  })
  @IfPresent()
  @IsBoolean()
  includeTopAgents?: boolean;

  @ApiPropertyOptional({
    default: true,
    description: 'Blocked traces, open and overdue incidents, audit chain validity.',
  })
  @IfPresent()
  @IsBoolean()
  includeAlerts?: boolean;

  @ApiPropertyOptional({
    default: false,
    description: 'Up to 10 traces below 0.5 confidence, with links to the dashboard.',
  })
  @IfPresent()
  @IsBoolean()
  includeLowConf?: boolean;

  @ApiPropertyOptional({ default: true, description: 'Inactive reports are never sent.' })
  @IfPresent()
  @IsBoolean()
  isActive?: boolean;
}

export class UpdateScheduledReportDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: REPORT_NAME_MAX })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(REPORT_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ enum: REPORT_FREQUENCIES, description: 'Changes the step of later sends.' })
  @IfPresent()
  @IsIn(REPORT_FREQUENCIES, { message: FREQUENCY_MESSAGE })
  frequency?: ReportFrequency;

  @ApiPropertyOptional({ type: [String], minItems: 1, maxItems: RECIPIENTS_MAX })
  @IfPresent()
  @Recipients()
  recipients?: string[];

  @ApiPropertyOptional() @IfPresent() @IsBoolean() includeMetrics?: boolean;
  @ApiPropertyOptional() @IfPresent() @IsBoolean() includeTopAgents?: boolean;
  @ApiPropertyOptional() @IfPresent() @IsBoolean() includeAlerts?: boolean;
  @ApiPropertyOptional() @IfPresent() @IsBoolean() includeLowConf?: boolean;

  @ApiPropertyOptional({ description: 'false pauses the report; true resumes it.' })
  @IfPresent()
  @IsBoolean()
  isActive?: boolean;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the next send is due; a past instant sends on the next scheduler tick.',
  })
  @IfPresent()
  @IsISO8601({ strict: true }, { message: 'nextSendAt must be an ISO 8601 date-time' })
  nextSendAt?: string;
}

export class ListScheduledReportsQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: ['true', 'false'], description: 'true: inactive reports too.' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'includeInactive must be true or false' })
  includeInactive?: 'true' | 'false';
}

export class ScheduledReportDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ type: String, nullable: true, description: 'null: organization-wide.' }) workspaceId:
    string | null;
  @ApiProperty() name: string;
  @ApiProperty({ enum: REPORT_FREQUENCIES }) frequency: ReportFrequency;
  @ApiProperty({ type: [String] }) recipients: string[];
  @ApiProperty() includeMetrics: boolean;
  @ApiProperty() includeTopAgents: boolean;
  @ApiProperty() includeAlerts: boolean;
  @ApiProperty() includeLowConf: boolean;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Last successful send.' })
  lastSentAt: string | null;
  @ApiProperty({ format: 'date-time' }) nextSendAt: string;
  @ApiProperty({ description: 'Successful sends.' }) sentCount: number;
  @ApiProperty({ type: String, nullable: true, description: 'User id of the creator.' }) createdBy:
    string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The creator’s e-mail when the report was made.',
  })
  createdByEmail: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class SendNowResultDto {
  @ApiProperty() sentCount: number;
  @ApiProperty({ format: 'date-time' }) lastSentAt: string;
  @ApiProperty({ format: 'date-time', description: 'Unchanged by send-now.' }) nextSendAt: string;
}

export function toScheduledReportResponse(row: ScheduledReportRow): ScheduledReportDto {
  return {
    id: row.id,
    organizationId: row.organizationId,
    workspaceId: row.workspaceId,
    name: row.name,
    frequency: row.frequency,
    recipients: row.recipients,
    includeMetrics: row.includeMetrics,
    includeTopAgents: row.includeTopAgents,
    includeAlerts: row.includeAlerts,
    includeLowConf: row.includeLowConf,
    isActive: row.isActive,
    lastSentAt: row.lastSentAt?.toISOString() ?? null,
    nextSendAt: row.nextSendAt.toISOString(),
    sentCount: row.sentCount,
    createdBy: row.createdBy,
    createdByEmail: row.createdByEmail,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export class ScheduledReportDeletedDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: [true] }) deleted: true;
}
