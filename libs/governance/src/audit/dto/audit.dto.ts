import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { type AuditEntryRow, PaginationQueryDto } from '#platform';
import { CONTENT_ALTERED_LISTED } from '../audit-content-check.js';
import type { AuditCheckpointRow } from '../audit-signing.schema.js';

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
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The failing entry; null when it is missing (`truncated`, or a gap at the end).',
  })
  id: string | null;
  @ApiProperty({
    enum: [
      'sequence_gap',
      'prev_hash_mismatch',
      'hash_mismatch',
      'verified_prefix_mismatch',
      'checkpoint_mismatch',
      'truncated',
    ],
    description:
      '`verified_prefix_mismatch`: the entry up to which an earlier verification passed now carries another hash ' +
      '(rewritten below the verified prefix; `?full=true` finds the first changed entry). `checkpoint_mismatch`: the ' +
      'entry of the highest signed checkpoint carries another hash. `truncated`: the chain ends before an entry ' +
      'verified or signed earlier.',
  })
  reason: string;
}

export class AuditVerifyDto {
  @ApiProperty() valid: boolean;
  @ApiProperty() totalEntries: number;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) firstEntry: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) lastEntry: string | null;
  @ApiProperty({
    description:
      'The first sequence this verification checked: 1 with `full=true` or on a first run, else the one after the ' +
      'prefix verified before.',
  })
  verifiedFrom: number;
  @ApiPropertyOptional({
    type: BrokenAtDto,
    description: 'Present when valid is false: the first entry that fails.',
  })
  brokenAt?: BrokenAtDto;
  @ApiPropertyOptional({
    description:
      'With `content=true`: the traces whose content was checked, each against the `metadata.contentHash` of its ' +
      'latest audit entry that records one (intact, altered, erased or unhashed; the intact ones are the rest). ' +
      'Every trace of the organization that has an audit entry, checked in full on every call.',
  })
  contentChecked?: number;
  @ApiPropertyOptional({
    description:
      'With `content=true`: traces whose stored content (inputContext, outputDecision, metadata, rationale) no ' +
      'longer hashes, with their `contentSalt`, to the hash their latest entry records; whose salt is gone while ' +
      'their entry records a hash; or that no longer point at that entry (the entry GET /traces/{id}/verify reads). ' +
      'The chain itself may still be valid: the content lies outside it.',
  })
  contentAltered?: number;
  @ApiPropertyOptional({
    type: [String],
    description:
      `With \`content=true\`: the ids of altered traces, at most ${CONTENT_ALTERED_LISTED}, the most recently ` +
      'recorded first (`contentAltered` counts them all); GET /traces/{id}/verify checks one.',
  })
  contentAlteredIds?: string[];
  @ApiPropertyOptional({
    description:
      'With `content=true`: traces whose subject’s content was erased (`erasedAt`): nothing left to check.',
  })
  contentErased?: number;
  @ApiPropertyOptional({
    description:
      'With `content=true`: traces none of whose audit entries records a content hash (stored before content ' +
      'hashing): their content cannot be checked. A trace whose entry records a hash is never unhashed, whatever ' +
      'its own columns say (a missing salt is `altered`).',
  })
  contentUnhashed?: number;
}

export class AuditVerifyQueryDto {
  @ApiPropertyOptional({
    type: 'boolean',
    default: false,
    description: 'Check every entry from the first, instead of only those after the prefix verified before.',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'full must be true or false' })
  full?: 'true' | 'false';

  @ApiPropertyOptional({
    type: 'boolean',
    default: false,
    description:
      'Also check every trace’s stored content against the content hash its latest audit entry records ' +
      '(`contentChecked`, `contentAltered`, …). Always a full pass over the traces, whatever `full` says.',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'content must be true or false' })
  content?: 'true' | 'false';
}

export class AuditCheckpointDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ description: 'The chain head signed: its sequence.' }) sequence: number;
  @ApiProperty({ description: 'The hash of the entry at `sequence`.' }) hash: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ description: 'RFC 7638 thumbprint of the signing key (see GET /audit/public-key).' })
  keyId: string;
  @ApiProperty({
    description:
      'base64url Ed25519 signature of the UTF-8 bytes of the RFC 8785 canonical JSON of ' +
      '`{organizationId, sequence, hash, createdAt, keyId}`.',
  })
  signature: string;
}

export class AuditJwkDto {
  @ApiProperty({ example: 'OKP' }) kty: string;
  @ApiProperty({ example: 'Ed25519' }) crv: string;
  @ApiProperty({ description: 'The raw public key, base64url.' }) x: string;
  @ApiProperty({ description: 'The key id.' }) kid: string;
  @ApiProperty({ example: 'EdDSA' }) alg: string;
  @ApiProperty({ example: 'sig' }) use: string;
}

export class AuditPublicKeyDto {
  @ApiProperty() keyId: string;
  @ApiProperty({ enum: ['Ed25519'] }) algorithm: 'Ed25519';
  @ApiProperty({ description: 'SubjectPublicKeyInfo, PEM.' }) publicKeyPem: string;
  @ApiProperty({ type: AuditJwkDto }) jwk: AuditJwkDto;
  @ApiProperty({ format: 'date-time', description: 'When the service first used the key.' })
  createdAt: string;
  @ApiProperty({ description: 'Whether the service signs with this key now (the others are older keys).' })
  current: boolean;
}

export class AuditPublicKeysDto {
  @ApiProperty({ type: [AuditPublicKeyDto] }) keys: AuditPublicKeyDto[];
}

export function toCheckpointResponse(row: AuditCheckpointRow): AuditCheckpointDto {
  return {
    id: row.id,
    organizationId: row.organizationId,
    sequence: row.sequence,
    hash: row.hash,
    createdAt: row.createdAt.toISOString(),
    keyId: row.keyId,
    signature: row.signature,
  };
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
