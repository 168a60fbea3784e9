import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { IfPresent, PaginationQueryDto } from '#platform';
import type { FriaRisk, FriaStatus, RiskLevel } from '../fria.schema.js';

export const FRIA_STATUSES: FriaStatus[] = ['draft', 'review', 'approved', 'archived'];
export const RISK_LEVELS: RiskLevel[] = ['low', 'medium', 'high'];
export const TEXT_MAX = 10_000;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class FriaRiskDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  title: string;

  @ApiPropertyOptional({ maxLength: 4000 })
  @IfPresent()
  @IsString()
  @MaxLength(4000)
  description?: string;

  @ApiPropertyOptional({ enum: RISK_LEVELS, default: 'medium' })
  @IfPresent()
  @IsIn(RISK_LEVELS)
  likelihood?: RiskLevel;

  @ApiPropertyOptional({ enum: RISK_LEVELS, default: 'medium' })
  @IfPresent()
  @IsIn(RISK_LEVELS)
  severity?: RiskLevel;

  @ApiPropertyOptional({ type: [String], maxItems: 20, description: 'Each at most 200 characters.' })
  @IfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(200, { each: true })
  affectedRights?: string[];

  @ApiPropertyOptional({ maxLength: 4000 })
  @IfPresent()
  @IsString()
  @MaxLength(4000)
  mitigation?: string;

  @ApiPropertyOptional({ enum: RISK_LEVELS, default: 'medium' })
  @IfPresent()
  @IsIn(RISK_LEVELS)
  residualRisk?: RiskLevel;
}

/**
 * The editable contents, shared by create (systemName required) and update (everything optional). A `string | null`
 * member says `type: String`: its design type is Object, which the document would otherwise show as an object.
 */
class FriaContentsDto {
  @ApiPropertyOptional({ type: String, maxLength: 64, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  deployerProfileId?: string | null;

  @ApiPropertyOptional({ type: String, maxLength: TEXT_MAX, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  purpose?: string | null;

  @ApiPropertyOptional({ type: String, maxLength: TEXT_MAX, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  affectedPersons?: string | null;

  @ApiPropertyOptional({ type: String, maxLength: TEXT_MAX, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  usageContext?: string | null;

  @ApiPropertyOptional({ type: String, maxLength: TEXT_MAX, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  durationOfUse?: string | null;

  @ApiPropertyOptional({ type: [FriaRiskDto], maxItems: 50 })
  @IfPresent()
  @IsArray()
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  @Type(() => FriaRiskDto)
  identifiedRisks?: FriaRiskDto[];

  @ApiPropertyOptional({ type: String, maxLength: TEXT_MAX, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  humanOversightSummary?: string | null;

  @ApiPropertyOptional({ type: String, maxLength: TEXT_MAX, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(TEXT_MAX)
  complaintsMechanism?: string | null;

  @ApiPropertyOptional({
    maxLength: TEXT_MAX,
    description: 'Wizard field: collapsed with `mitigations` into one risk row titled "Identified risks".',
  })
  @IfPresent()
  @IsString()
  @MaxLength(TEXT_MAX)
  risksIdentified?: string;

  @ApiPropertyOptional({ maxLength: TEXT_MAX, description: 'Wizard field: see `risksIdentified`.' })
  @IfPresent()
  @IsString()
  @MaxLength(TEXT_MAX)
  mitigations?: string;
}

export class CreateFriaDto extends FriaContentsDto {
  @ApiProperty({ minLength: 1, maxLength: 200, description: 'Trimmed.' })
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  systemName: string;
}

export class UpdateFriaDto extends FriaContentsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'Trimmed.' })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  systemName?: string;
}

export class TransitionFriaDto {
  @ApiProperty({ enum: FRIA_STATUSES })
  @IsIn(FRIA_STATUSES, { message: `status must be one of ${FRIA_STATUSES.join(', ')}` })
  status: FriaStatus;
}

export class ListFriaQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: FRIA_STATUSES, description: 'Only assessments in this state.' })
  @IsOptional()
  @IsIn(FRIA_STATUSES, { message: `status must be one of ${FRIA_STATUSES.join(', ')}` })
  status?: FriaStatus;

  @ApiPropertyOptional({ maxLength: 200, description: 'Case-insensitive substring of systemName.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;
}

export class FriaRiskResponseDto {
  @ApiProperty() title: string;
  @ApiPropertyOptional() description?: string;
  @ApiProperty({ enum: RISK_LEVELS }) likelihood: RiskLevel;
  @ApiProperty({ enum: RISK_LEVELS }) severity: RiskLevel;
  @ApiProperty({ type: [String] }) affectedRights: string[];
  @ApiPropertyOptional() mitigation?: string;
  @ApiProperty({ enum: RISK_LEVELS }) residualRisk: RiskLevel;
}

export class FriaDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() systemName: string;
  @ApiProperty({ type: String, nullable: true }) deployerProfileId: string | null;
  @ApiProperty({ type: String, nullable: true }) purpose: string | null;
  @ApiProperty({ type: String, nullable: true }) affectedPersons: string | null;
  @ApiProperty({ type: String, nullable: true }) usageContext: string | null;
  @ApiProperty({ type: String, nullable: true }) durationOfUse: string | null;
  @ApiProperty({ type: [FriaRiskResponseDto] }) identifiedRisks: FriaRisk[];
  @ApiProperty({ type: String, nullable: true }) humanOversightSummary: string | null;
  @ApiProperty({ type: String, nullable: true }) complaintsMechanism: string | null;
  @ApiProperty({ enum: FRIA_STATUSES }) status: FriaStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'SHA-256 hex of the canonical contents, anchored on entering review and on approval.',
  })
  chainHash: string | null;
  @ApiProperty({ type: String, nullable: true }) approvedBy: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) approvedAt: string | null;
  @ApiProperty({ type: String, nullable: true }) createdBy: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ minimum: 0, maximum: 100, description: 'Share (%) of the 8 assessed fields populated.' })
  completeness: number;
}

export class FriaDeletedDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: [true] }) deleted: true;
}

export class FriaVerificationDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: FRIA_STATUSES }) status: FriaStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The stored chainHash (null if never anchored).',
  })
  anchoredHash: string | null;
  @ApiProperty({ description: 'SHA-256 hex of the canonical stored contents, computed now.' })
  computedHash: string;
  @ApiProperty({
    type: Boolean,
    nullable: true,
    description: 'Whether they are equal; null when nothing was ever anchored.',
  })
  matches: boolean | null;
}

export class FriaHistoryQueryDto extends PaginationQueryDto {}

export class FriaHistoryActorDto {
  @ApiProperty({ enum: ['user', 'api_key', 'agent', 'scim', 'system'] }) type: string;
  @ApiProperty({ type: String, nullable: true }) id: string | null;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
}

export class FriaHistoryEntryDto {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'Position in the organization’s audit chain.' }) sequence: number;
  @ApiProperty({ description: 'fria.create, fria.update, fria.transition or fria.delete.' })
  eventType: string;
  @ApiProperty({ type: FriaHistoryActorDto }) actor: FriaHistoryActorDto;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ description: 'The entry’s hash in the audit chain.' }) hash: string;
}
