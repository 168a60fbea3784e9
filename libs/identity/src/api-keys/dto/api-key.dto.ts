import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { OBJECT_ID_PATTERN } from '#platform';
import type { ApiKeyRow, ApiKeyScope } from '../api-key.schema.js';

export const MAX_SCOPE_AGENT_IDS = 100;
const NAME_MAX_LENGTH = 120;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class ApiKeyScopeInputDto {
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', pattern: OBJECT_ID_PATTERN.source },
    nullable: true,
    maxItems: MAX_SCOPE_AGENT_IDS,
    minItems: 1,
    example: ['661f0c2a9b1e4c0012345678'],
    description:
      'Agents of the caller’s organization whose data the key may see (1 to 100 agent ids). Absent or null: ' +
      'every agent. On PATCH, absent leaves the restriction unchanged and null removes it. An empty list is ' +
      'refused (it would read as either "none" or "all").',
  })
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_SCOPE_AGENT_IDS)
  @IsString({ each: true })
  @Matches(OBJECT_ID_PATTERN, { each: true, message: 'each agent id must be 24 lower-case hex characters' })
  agentIds?: string[] | null;

  @ApiPropertyOptional({
    description: 'A read-only key may only read (GET); writes answer 403 FORBIDDEN. Default false.',
  })
  @ValidateIf((o: ApiKeyScopeInputDto) => o.readOnly !== undefined)
  @IsBoolean()
  readOnly?: boolean;
}

export class CreateApiKeyDto {
  @ApiProperty({ example: 'CI pipeline', maxLength: NAME_MAX_LENGTH })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX_LENGTH)
  name: string;

  @ApiPropertyOptional({ type: ApiKeyScopeInputDto, description: 'Default: every agent, writable.' })
  @ValidateIf((o: CreateApiKeyDto) => o.scope !== undefined)
  @IsObject()
  @ValidateNested()
  @Type(() => ApiKeyScopeInputDto)
  scope?: ApiKeyScopeInputDto;
}

export class UpdateApiKeyDto {
  @ApiPropertyOptional({ example: 'CI pipeline (staging)', maxLength: NAME_MAX_LENGTH })
  @ValidateIf((o: UpdateApiKeyDto) => o.name !== undefined)
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(NAME_MAX_LENGTH)
  name?: string;

  @ApiPropertyOptional({
    type: ApiKeyScopeInputDto,
    description: 'Merged into the current scope: only the fields present change.',
  })
  @ValidateIf((o: UpdateApiKeyDto) => o.scope !== undefined)
  @IsObject()
  @ValidateNested()
  @Type(() => ApiKeyScopeInputDto)
  scope?: ApiKeyScopeInputDto;
}

export class ApiKeyScopeDto {
  @ApiProperty({
    type: [String],
    nullable: true,
    description: 'Agents whose data the key may see; null means every agent.',
  })
  agentIds: string[] | null;

  @ApiProperty({ description: 'The key may only read.' }) readOnly: boolean;
}

export class ApiKeyDto {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'CI pipeline' }) name: string;
  @ApiProperty({
    example: 'svc_live_Zk3mQ9xT2bLw',
    description: 'The start of the key, to recognise it; the full key is shown only when created.',
  })
  prefix: string;
  @ApiProperty({ type: ApiKeyScopeDto }) scope: ApiKeyScopeDto;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Last authenticated use, to the minute.',
  })
  lastUsedAt: string | null;
}

export class CreatedApiKeyDto {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'CI pipeline' }) name: string;
  @ApiProperty({
    example: 'svc_live_Zk3mQ9xT2bLwR8vN1cYpD4sHf6gJ0aKe7uWq5oEiMtX',
    description:
      'The key, shown this once: only its SHA-256 is stored and it cannot be recovered. Send it as `X-API-Key`.',
  })
  key: string;
  @ApiProperty({ example: 'svc_live_Zk3mQ9xT2bLw' }) prefix: string;
  @ApiProperty({ type: ApiKeyScopeDto }) scope: ApiKeyScopeDto;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

/** The columns a key response is built from: the hash is not among them. */
export type ApiKeyView = Pick<ApiKeyRow, 'id' | 'name' | 'prefix' | 'scope' | 'createdAt' | 'lastUsedAt'>;

export function toApiKeyScopeResponse(scope: ApiKeyScope): ApiKeyScopeDto {
  return { agentIds: scope.agentIds?.length ? [...scope.agentIds] : null, readOnly: scope.readOnly === true };
}

/** A workspace key as listings show it: prefix only. */
export function toApiKeyResponse(row: ApiKeyView): ApiKeyDto {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scope: toApiKeyScopeResponse(row.scope),
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  };
}

/** The one response that carries the plaintext key: the answer to its creation. */
export function toCreatedApiKeyResponse(row: ApiKeyView, key: string): CreatedApiKeyDto {
  return {
    id: row.id,
    name: row.name,
    key,
    prefix: row.prefix,
    scope: toApiKeyScopeResponse(row.scope),
    createdAt: row.createdAt.toISOString(),
  };
}
