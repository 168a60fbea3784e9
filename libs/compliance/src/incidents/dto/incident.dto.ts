import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsISO8601, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { IfPresent, PaginationQueryDto } from '#platform';
import { INCIDENT_CATEGORIES, INCIDENT_STATUSES } from '../incident-clock.js';
import type { IncidentCategory, IncidentStatus } from '../incident.schema.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
export const DESCRIPTION_MAX = 10_000;

export class CreateIncidentDto {
  @ApiProperty({ minLength: 1, maxLength: 200, description: 'Trimmed.' })
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  title: string;

  @ApiPropertyOptional({ maxLength: DESCRIPTION_MAX })
  @IfPresent()
  @IsString()
  @MaxLength(DESCRIPTION_MAX)
  description?: string;

  @ApiProperty({
    enum: INCIDENT_CATEGORIES,
    description:
      'Sets the deadline: death 10 days, widespread_infringement and critical_infrastructure 2, other 15.',
  })
  @IsIn(INCIDENT_CATEGORIES, { message: `category must be one of ${INCIDENT_CATEGORIES.join(', ')}` })
  category: IncidentCategory;

  @ApiPropertyOptional({ description: 'An agent of the organization.' })
  @IfPresent()
  @IsString()
  @MaxLength(64)
  agentId?: string;

  @ApiPropertyOptional({ description: 'A trace of the organization.' })
  @IfPresent()
  @IsString()
  @MaxLength(64)
  traceId?: string;

  @ApiProperty({
    format: 'date-time',
    description: 'When the organization became aware of the incident; not in the future.',
  })
  @IsISO8601({ strict: true }, { message: 'awareAt must be an ISO 8601 date-time' })
  awareAt: string;
}

export class UpdateIncidentDto {
  @ApiProperty({
    enum: INCIDENT_STATUSES,
    description: 'open → reported or closed; reported → closed. The current status again changes nothing.',
  })
  @IsIn(INCIDENT_STATUSES, { message: `status must be one of ${INCIDENT_STATUSES.join(', ')}` })
  status: IncidentStatus;

  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'With status reported only: when it was reported (default now); not before awareAt or in the future.',
  })
  @IfPresent()
  @IsISO8601({ strict: true }, { message: 'reportedAt must be an ISO 8601 date-time' })
  reportedAt?: string;
}

export class ListIncidentsQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: INCIDENT_STATUSES })
  @IsOptional()
  @IsIn(INCIDENT_STATUSES, { message: `status must be one of ${INCIDENT_STATUSES.join(', ')}` })
  status?: IncidentStatus;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'true: only open incidents past their deadline; false: only those that are not.',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'overdue must be true or false' })
  overdue?: 'true' | 'false';
}

export class IncidentDto {
  @ApiProperty() id: string;
  @ApiProperty() title: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: INCIDENT_CATEGORIES }) category: IncidentCategory;
  @ApiProperty({ type: String, nullable: true }) agentId: string | null;
  @ApiProperty({ type: String, nullable: true }) traceId: string | null;
  @ApiProperty({ format: 'date-time' }) awareAt: string;
  @ApiProperty({ format: 'date-time', description: 'awareAt plus the category’s reporting days.' })
  deadline: string;
  @ApiProperty({ enum: INCIDENT_STATUSES }) status: IncidentStatus;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) reportedAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) closedAt: string | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'While open: whole seconds to the deadline, 0 once past. null once reported or closed.',
  })
  timeLeftSeconds: number | null;
  @ApiProperty({ description: 'Open and past its deadline.' }) overdue: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'User id of the creator.' }) createdBy:
    string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}
