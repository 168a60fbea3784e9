import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { type AuditEntryRow, PaginationQueryDto } from '#platform';

export class AuditQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ format: 'date-time', description: 'Entries created at or after this instant.' })
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Entries created at or before this instant.' })
  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;

  @ApiPropertyOptional({
    example: 'auth.*',
    description: 'Exact event type, or a prefix ending in `*` (for example `auth.*`).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Matches(/^[a-z0-9_.]+\*?$/i, { message: 'eventType must be an event name, optionally ending in *' })
  eventType?: string;

  @ApiPropertyOptional({ description: 'Entries whose user is this user id.' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  userId?: string;
}

export class AuditActorDto {
  @ApiProperty({ enum: ['user', 'api_key', 'agent', 'scim', 'system'] }) type: string;
  @ApiProperty({ type: 'string', nullable: true }) id: string | null;
  @ApiProperty({ type: 'string', nullable: true }) email: string | null;
}

export class AuditEntryDto {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'Position in the organization chain: 1, 2, 3 … without gaps.' })
  sequence: number;
  @ApiProperty() organizationId: string;
  @ApiProperty({ example: 'auth.login' }) eventType: string;
  @ApiProperty({ type: 'string', nullable: true }) userId: string | null;
  @ApiProperty({ type: AuditActorDto }) actor: AuditActorDto;
  @ApiProperty({ type: 'string', nullable: true }) targetType: string | null;
  @ApiProperty({ type: 'string', nullable: true }) targetId: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata: Record<string, unknown>;
  @ApiProperty({ type: 'string', nullable: true }) ip: string | null;
  @ApiProperty({ type: 'string', nullable: true }) userAgent: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ description: 'Hash of the previous entry; 64 zeros for the first.' }) prevHash: string;
  @ApiProperty({
    description:
      'SHA-256 hex of prevHash + "\\n" + RFC 8785 canonical JSON of the entry without id, prevHash, hash.',
  })
  hash: string;
}

/** The first stored entry at which the chain fails. */
export class BrokenAtDto {
  @ApiProperty({ description: 'Sequence of the failing entry (after a gap: the first entry past it).' })
  sequence: number;
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['sequence_gap', 'prev_hash_mismatch', 'hash_mismatch'] }) reason: string;
}

export class AuditVerifyDto {
  @ApiProperty() valid: boolean;
  @ApiProperty() totalEntries: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) firstEntry: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) lastEntry: string | null;
  @ApiPropertyOptional({
    type: BrokenAtDto,
    description: 'Present when valid is false: the first entry that fails.',
  })
  brokenAt?: BrokenAtDto;
}

export function toAuditEntryResponse(row: AuditEntryRow): AuditEntryDto {
  return {
    id: row.id,
    sequence: row.sequence,
    organizationId: row.organizationId,
    eventType: row.eventType,
    userId: row.userId,
    actor: row.actor,
    targetType: row.targetType,
    targetId: row.targetId,
    metadata: row.metadata,
    ip: row.ip,
    userAgent: row.userAgent,
    createdAt: row.createdAt.toISOString(),
    prevHash: row.prevHash,
    hash: row.hash,
  };
}
