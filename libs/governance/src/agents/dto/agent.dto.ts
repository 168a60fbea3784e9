import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNotEmpty, IsString, MaxLength, ValidateIf } from 'class-validator';
import type { AgentRow } from '../agent.schema.js';

const NAME_MAX_LENGTH = 200;
const DESCRIPTION_MAX_LENGTH = 2000;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class CreateAgentDto {
  @ApiProperty({ example: 'Support triage bot', minLength: 1, maxLength: NAME_MAX_LENGTH })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX_LENGTH)
  name: string;

  @ApiPropertyOptional({
    example: 'Routes incoming tickets to the right queue.',
    maxLength: DESCRIPTION_MAX_LENGTH,
    nullable: true,
    type: String,
    description: 'Optional; blank or null stores no description.',
  })
  @ValidateIf((o: CreateAgentDto) => o.description !== undefined && o.description !== null)
  @Transform(trim)
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;
}

export class UpdateAgentDto {
  @ApiPropertyOptional({ example: 'Support triage bot v2', minLength: 1, maxLength: NAME_MAX_LENGTH })
  @ValidateIf((o: UpdateAgentDto) => o.name !== undefined)
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX_LENGTH)
  name?: string;

  @ApiPropertyOptional({
    maxLength: DESCRIPTION_MAX_LENGTH,
    nullable: true,
    type: String,
    description: 'Absent leaves the description unchanged; null or blank removes it.',
  })
  @ValidateIf((o: UpdateAgentDto) => o.description !== undefined && o.description !== null)
  @Transform(trim)
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;
}

export class AgentDto {
  @ApiProperty({ example: '661f0c2a9b1e4c0012345678' }) id: string;
  @ApiProperty({ example: 'Support triage bot' }) name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'svc_agent_Zk3mQ9xT2bLw',
    description: 'The start of the agent’s live key, to recognise it; the full key is shown only once.',
  })
  keyPrefix: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'User id of the creator.' })
  createdBy: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class CreatedAgentDto extends AgentDto {
  @ApiProperty({
    example: 'svc_agent_Zk3mQ9xT2bLwR8vN1cYpD4sHf6gJ0aKe7uWq5oEiMtX',
    description:
      'The agent key, shown this once: only its SHA-256 is stored. Send it as `X-API-Key`; traces sent with it ' +
      'are attached to this agent.',
  })
  apiKey: string;
}

export class AgentStatusCountsDto {
  @ApiProperty() approved: number;
  @ApiProperty() flagged: number;
  @ApiProperty() blocked: number;
  @ApiProperty() success: number;
}

export class AgentAnalyticsDto {
  @ApiProperty() totalTraces: number;
  @ApiProperty({ type: AgentStatusCountsDto }) byStatus: AgentStatusCountsDto;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0.87,
    description: 'Mean confidence of the agent’s traces, two decimals; null when there are none.',
  })
  averageConfidence: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0.05,
    description:
      'Share of traces with `humanOverride` set, two decimals; null when there are none. Until human verdicts ' +
      'are recorded separately the denominator is every trace of the agent.',
  })
  humanOverrideRate: number | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastTraceAt: string | null;
}

export class AgentDetailDto extends AgentDto {
  @ApiProperty({ type: AgentAnalyticsDto }) analytics: AgentAnalyticsDto;
}

export class RegeneratedAgentKeyDto {
  @ApiProperty({
    example: 'svc_agent_Zk3mQ9xT2bLwR8vN1cYpD4sHf6gJ0aKe7uWq5oEiMtX',
    description: 'The new agent key, shown this once; the previous key is refused from now on.',
  })
  apiKey: string;
}

/** An agent row with the prefix of its live key (null if it has none). */
export type AgentView = AgentRow & { keyPrefix: string | null };

/** One aggregate over the agent's traces, as the repository reads it. */
export interface AgentTraceStats {
  total: number;
  approved: number;
  flagged: number;
  blocked: number;
  success: number;
  averageConfidence: number | null;
  humanOverrides: number;
  lastTraceAt: Date | null;
}

const twoDecimals = (value: number) => Math.round(value * 100) / 100;

export function toAgentResponse(row: AgentView): AgentDto {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    keyPrefix: row.keyPrefix,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The one agent response that carries the plaintext key: the answer to its creation. */
export function toCreatedAgentResponse(row: AgentView, apiKey: string): CreatedAgentDto {
  return { ...toAgentResponse(row), apiKey };
}

export function toAgentAnalyticsResponse(stats: AgentTraceStats): AgentAnalyticsDto {
  const total = stats.total;
  return {
    totalTraces: total,
    byStatus: {
      approved: stats.approved,
      flagged: stats.flagged,
      blocked: stats.blocked,
      success: stats.success,
    },
    averageConfidence:
      total === 0 || stats.averageConfidence === null ? null : twoDecimals(stats.averageConfidence),
    humanOverrideRate: total === 0 ? null : twoDecimals(stats.humanOverrides / total),
    lastTraceAt: stats.lastTraceAt?.toISOString() ?? null,
  };
}

export function toAgentDetailResponse(row: AgentView, stats: AgentTraceStats): AgentDetailDto {
  return { ...toAgentResponse(row), analytics: toAgentAnalyticsResponse(stats) };
}

export function toRegeneratedAgentKeyResponse(apiKey: string): RegeneratedAgentKeyDto {
  return { apiKey };
}
