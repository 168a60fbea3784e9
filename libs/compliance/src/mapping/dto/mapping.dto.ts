import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { IfPresent, OBJECT_ID_PATTERN } from '#platform';
import { FRAMEWORKS } from '../catalogues/index.js';
import type {
  ClauseStatus,
  ComplianceMappingNoteRow,
  EvidenceRefType,
  Framework,
} from '../compliance-mapping.schema.js';

export const CLAUSE_STATUSES: readonly ClauseStatus[] = ['covered', 'partial', 'gap', 'not-applicable'];
export const EVIDENCE_REF_TYPES: readonly EvidenceRefType[] = ['fria', 'policy', 'audit', 'incident'];
export const EVIDENCE_MAX = 4000;
export const EVIDENCE_REFS_MAX = 20;
export const CLAUSE_ID_MAX = 32;

const FRAMEWORK_MESSAGE = `framework must be one of ${FRAMEWORKS.join(', ')}`;

export class FrameworkQueryDto {
  @ApiPropertyOptional({ enum: FRAMEWORKS, default: 'iso-42001' })
  @IsOptional()
  @IsIn(FRAMEWORKS, { message: FRAMEWORK_MESSAGE })
  framework?: Framework;
}

export class EvidenceRefDto {
  @ApiProperty({ enum: EVIDENCE_REF_TYPES })
  @IsIn(EVIDENCE_REF_TYPES, { message: `type must be one of ${EVIDENCE_REF_TYPES.join(', ')}` })
  type: EvidenceRefType;

  @ApiProperty({
    pattern: OBJECT_ID_PATTERN.source,
    description: 'Id of a record of the caller’s organization.',
  })
  @Matches(OBJECT_ID_PATTERN, { message: 'id must be an object id' })
  id: string;
}

export class UpdateMappingDto {
  @ApiProperty({ enum: FRAMEWORKS })
  @IsIn(FRAMEWORKS, { message: FRAMEWORK_MESSAGE })
  framework: Framework;

  @ApiProperty({ maxLength: CLAUSE_ID_MAX, description: 'A clause id of the framework’s catalogue.' })
  @IsString()
  @MaxLength(CLAUSE_ID_MAX)
  clauseId: string;

  @ApiPropertyOptional({
    enum: CLAUSE_STATUSES,
    description: '`gap` on the first write when omitted; unchanged when omitted later.',
  })
  @IfPresent()
  @IsIn(CLAUSE_STATUSES, { message: `status must be one of ${CLAUSE_STATUSES.join(', ')}` })
  status?: ClauseStatus;

  @ApiPropertyOptional({ maxLength: EVIDENCE_MAX, description: 'Unchanged when omitted.' })
  @IfPresent()
  @IsString()
  @MaxLength(EVIDENCE_MAX)
  evidence?: string;

  @ApiPropertyOptional({
    type: [EvidenceRefDto],
    maxItems: EVIDENCE_REFS_MAX,
    description: 'Replaces the list; unchanged when omitted. Each must exist in the organization.',
  })
  @IfPresent()
  @IsArray()
  @ArrayMaxSize(EVIDENCE_REFS_MAX)
  @ValidateNested({ each: true })
  @Type(() => EvidenceRefDto)
  evidenceRefs?: EvidenceRefDto[];
}

export class CatalogueClauseDto {
  @ApiProperty() clauseId: string;
  @ApiProperty({ description: 'A short paraphrase, not the standard’s text.' }) title: string;
  @ApiProperty({ description: 'What evidence usually shows the clause is met.' }) guidance: string;
  @ApiProperty({ enum: ['gap'] }) defaultStatus: 'gap';
}

export class CatalogueDto {
  @ApiProperty({ enum: FRAMEWORKS }) framework: Framework;
  @ApiProperty() totalClauses: number;
  @ApiProperty({ type: [CatalogueClauseDto] }) clauses: CatalogueClauseDto[];
}

export class CoverageDto {
  @ApiProperty() covered: number;
  @ApiProperty() partial: number;
  @ApiProperty({ description: 'Including clauses without a note.' }) gap: number;
  @ApiProperty() notApplicable: number;
  @ApiProperty({ description: 'Clauses in the catalogue.' }) total: number;
  @ApiProperty({
    description:
      '(covered + partial / 2) / (total − notApplicable) × 100, one decimal; 0 when nothing applies.',
  })
  percent: number;
}

export class MappingNoteDto {
  @ApiProperty() clauseId: string;
  @ApiProperty({ enum: CLAUSE_STATUSES }) status: ClauseStatus;
  @ApiProperty({ type: String, nullable: true }) evidence: string | null;
  @ApiProperty({ type: [EvidenceRefDto] }) evidenceRefs: EvidenceRefDto[];
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) reviewedAt: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'User id of the last reviewer.' })
  reviewedBy: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The reviewer’s e-mail when they wrote: a copy that survives the user’s change or deletion.',
  })
  reviewedByEmail: string | null;
}

export class MappingDto {
  @ApiProperty({ enum: FRAMEWORKS }) framework: Framework;
  @ApiProperty() totalClauses: number;
  @ApiProperty({ type: [MappingNoteDto], description: 'Clauses with a note, in catalogue order.' })
  notes: MappingNoteDto[];
  @ApiProperty({ type: CoverageDto }) coverage: CoverageDto;
}

export class MappingUpdateDto {
  @ApiProperty({ type: MappingNoteDto }) note: MappingNoteDto;
  @ApiProperty({ type: CoverageDto }) coverage: CoverageDto;
}

export function toMappingNote(row: ComplianceMappingNoteRow): MappingNoteDto {
  return {
    clauseId: row.clauseId,
    status: row.status,
    evidence: row.evidence,
    evidenceRefs: row.evidenceRefs,
    reviewedAt: row.reviewedAt?.toISOString() ?? null,
    reviewedBy: row.reviewedBy,
    reviewedByEmail: row.reviewedByEmail,
  };
}

export class CrosswalkClauseDto {
  @ApiProperty() clauseId: string;
  @ApiProperty() title: string;
  @ApiProperty({ enum: CLAUSE_STATUSES, description: 'The organization’s status; `gap` without a note.' })
  status: ClauseStatus;
  @ApiProperty({ description: 'Whether the organization has written a note for the clause.' }) noted: boolean;
}

export class CrosswalkFrameworkDto {
  @ApiProperty({ enum: FRAMEWORKS }) framework: Framework;
  @ApiProperty({ type: [CrosswalkClauseDto] }) clauses: CrosswalkClauseDto[];
}

export class CrosswalkThemeDto {
  @ApiProperty({ example: 'impact-assessment' }) themeId: string;
  @ApiProperty() title: string;
  @ApiProperty({
    type: [CrosswalkFrameworkDto],
    description: 'iso-42001, eu-ai-act, nist-rmf, in that order.',
  })
  frameworks: CrosswalkFrameworkDto[];
}

export class CrosswalkDto {
  @ApiProperty({ type: [CrosswalkThemeDto] }) themes: CrosswalkThemeDto[];
}
