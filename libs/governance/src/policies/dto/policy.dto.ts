import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { OBJECT_ID_PATTERN, PaginationQueryDto } from '#platform';
import {
  FIXED_FIELDS,
  LIMITS,
  OPERATORS,
  type PolicyCondition,
  type PolicyTemplate,
  POLICY_MATCH_MODES,
  POLICY_OUTCOMES,
} from '../engine/index.js';
import { DEFAULT_MIN_SCORE, PII_ENTITIES } from '../../pii/index.js';
import type { PolicyRow } from '../policy.schema.js';

export const NAME_MAX_LENGTH = 200;
export const DESCRIPTION_MAX_LENGTH = 2000;
export const MAX_POLICY_AGENT_IDS = 100;
export const PRIORITY_MIN = 0;
export const PRIORITY_MAX = 10_000;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

const CONDITIONS_DESCRIPTION =
  `1 to ${LIMITS.maxConditions} conditions \`{field, operator, value}\`. Fields: ${FIXED_FIELDS.join(', ')}, ` +
  `metadata.<path>. Operators: ${OPERATORS.join(', ')}. \`matches\` takes an RE2 pattern (at most ` +
  `${LIMITS.maxPatternLength} characters, case-insensitive). \`containsPii\` takes a list of PII types ` +
  `(${PII_ENTITIES.join(', ')}) and an optional \`minScore\` (0 to 1, default ${DEFAULT_MIN_SCORE}): it holds when ` +
  'the text holds a value of one of them that its detector validates (checksums, issuer ranges; ' +
  'docs/agent-builders.md, "PII detectors"). Each refusal is a detail named by its path (`conditions[1].value`).';

export class PolicyConditionDto {
  @ApiProperty({ example: 'outputDecision.text' }) field: string;
  @ApiProperty({ enum: OPERATORS }) operator: string;
  @ApiPropertyOptional({
    oneOf: [
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'number' }] } },
    ],
    description:
      'Omitted (or true) for exists / not_exists; a list for in / not_in; a number for gt to lte; a list of PII ' +
      'types for containsPii.',
  })
  value?: unknown;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: 1,
    description: `containsPii only: the lowest detector score that counts (default ${DEFAULT_MIN_SCORE}).`,
  })
  minScore?: number;
}

export class ListPoliciesQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description: 'true: inactive policies too. Default false (active only).',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'includeInactive must be true or false' })
  includeInactive?: 'true' | 'false';
}

/** Fields shared by a full create and an update; each is checked only when present. */
class PolicyFieldsDto {
  @ApiPropertyOptional({
    maxLength: DESCRIPTION_MAX_LENGTH,
    nullable: true,
    type: String,
    example: 'Blocks answers that reveal an e-mail address.',
  })
  @ValidateIf((o: PolicyFieldsDto) => o.description !== undefined && o.description !== null)
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;

  @ApiPropertyOptional({ enum: POLICY_MATCH_MODES, default: 'all' })
  @ValidateIf((o: PolicyFieldsDto) => o.match !== undefined)
  @IsIn(POLICY_MATCH_MODES)
  match?: 'all' | 'any';

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', pattern: OBJECT_ID_PATTERN.source },
    maxItems: MAX_POLICY_AGENT_IDS,
    description:
      'Agents of the caller’s organization the policy applies to; empty (the default) means every agent.',
  })
  @ValidateIf((o: PolicyFieldsDto) => o.agentIds !== undefined)
  @IsArray()
  @ArrayMaxSize(MAX_POLICY_AGENT_IDS)
  @IsString({ each: true })
  @Matches(OBJECT_ID_PATTERN, { each: true, message: 'each agent id must be 24 lower-case hex characters' })
  agentIds?: string[];

  @ApiPropertyOptional({
    minimum: PRIORITY_MIN,
    maximum: PRIORITY_MAX,
    default: 100,
    description: 'Lower runs (and is reported) first.',
  })
  @ValidateIf((o: PolicyFieldsDto) => o.priority !== undefined)
  @IsInt()
  @Min(PRIORITY_MIN)
  @Max(PRIORITY_MAX)
  priority?: number;

  @ApiPropertyOptional({ default: true, description: 'Inactive policies are kept but never evaluated.' })
  @ValidateIf((o: PolicyFieldsDto) => o.isActive !== undefined)
  @IsBoolean()
  isActive?: boolean;
}

/**
 * Either a full policy (`name`, `outcome`, `conditions` required) or `{templateId, name?}`. Conditions are
 * checked by the engine (`validateConditions`) in the service, so that each refusal names its path.
 */
export class CreatePolicyDto extends PolicyFieldsDto {
  @ApiPropertyOptional({
    example: 'email-address',
    description:
      'Creates the policy from a template (`GET /policies/templates`); only `name` may be sent beside it.',
  })
  @ValidateIf((o: CreatePolicyDto) => o.templateId !== undefined)
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  templateId?: string;

  @ApiPropertyOptional({
    maxLength: NAME_MAX_LENGTH,
    example: 'No e-mail addresses in answers',
    description: 'Required unless templateId is given (then it defaults to the template’s name).',
  })
  @ValidateIf((o: CreatePolicyDto) => o.templateId === undefined || o.name !== undefined)
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX_LENGTH)
  name?: string;

  @ApiPropertyOptional({ enum: POLICY_OUTCOMES, description: 'Required unless templateId is given.' })
  @ValidateIf((o: CreatePolicyDto) => o.templateId === undefined || o.outcome !== undefined)
  @IsIn(POLICY_OUTCOMES)
  outcome?: 'block' | 'flag';

  @ApiPropertyOptional({ type: [PolicyConditionDto], description: CONDITIONS_DESCRIPTION })
  @ValidateIf((o: CreatePolicyDto) => o.templateId === undefined)
  @IsDefined()
  @Allow()
  conditions?: unknown;
}

export class UpdatePolicyDto extends PolicyFieldsDto {
  @ApiPropertyOptional({ maxLength: NAME_MAX_LENGTH })
  @ValidateIf((o: UpdatePolicyDto) => o.name !== undefined)
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX_LENGTH)
  name?: string;

  @ApiPropertyOptional({ enum: POLICY_OUTCOMES })
  @ValidateIf((o: UpdatePolicyDto) => o.outcome !== undefined)
  @IsIn(POLICY_OUTCOMES)
  outcome?: 'block' | 'flag';

  @ApiPropertyOptional({
    type: [PolicyConditionDto],
    description: `Replaces the whole list. ${CONDITIONS_DESCRIPTION}`,
  })
  @Allow()
  conditions?: unknown;
}

export class PolicyDto {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'No e-mail addresses in answers' }) name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: POLICY_OUTCOMES }) outcome: 'block' | 'flag';
  @ApiProperty({ type: [PolicyConditionDto] }) conditions: PolicyCondition[];
  @ApiProperty({ enum: POLICY_MATCH_MODES }) match: 'all' | 'any';
  @ApiProperty({ type: [String], description: 'Empty: every agent.' }) agentIds: string[];
  @ApiProperty({ minimum: PRIORITY_MIN, maximum: PRIORITY_MAX }) priority: number;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ nullable: true, type: String, description: 'The template it was created from.' })
  templateId: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'User id of the creator.' })
  createdBy: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class PolicyTemplateDto {
  @ApiProperty({ example: 'email-address' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: POLICY_OUTCOMES }) outcome: 'block' | 'flag';
  @ApiProperty({ type: [PolicyConditionDto] }) conditions: PolicyCondition[];
}

export function toPolicyResponse(row: PolicyRow): PolicyDto {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    outcome: row.outcome,
    conditions: row.conditions,
    match: row.match,
    agentIds: [...row.agentIds],
    priority: row.priority,
    isActive: row.isActive,
    templateId: row.templateId,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toPolicyTemplateResponse(template: PolicyTemplate): PolicyTemplateDto {
  return {
    id: template.id,
    name: template.name,
    description: template.description,
    outcome: template.outcome,
    conditions: template.conditions.map((c) => ({ ...c })),
  };
}
