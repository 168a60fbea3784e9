import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsFQDN, IsString, MaxLength } from 'class-validator';
import type { SsoDomainClaimRow, SsoDomainStatus } from '../sso.schema.js';
import { challengeRecordName } from '../domain-policy.js';

export const SSO_DOMAIN_STATUSES: readonly SsoDomainStatus[] = ['pending', 'verified', 'failing'];

/** A domain as written: trimmed, lower-cased, without a trailing dot. */
export const domainTransform = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? value.normalize('NFKC').trim().toLowerCase().replace(/\.$/, '') : value;

export class ClaimSsoDomainDto {
  @ApiProperty({
    example: 'bigcorp.example',
    maxLength: 253,
    description: 'An e-mail domain the organization owns.',
  })
  @Transform(domainTransform)
  @IsString()
  @MaxLength(253)
  @IsFQDN({ require_tld: true }, { message: 'domain must be a domain name' })
  domain: string;
}

export class DnsRecordDto {
  @ApiProperty({ enum: ['TXT'] }) type: 'TXT';
  @ApiProperty({ example: '_governance-challenge.bigcorp.example' }) name: string;
  @ApiProperty({ description: 'The value the TXT record must hold, exactly.' }) value: string;
}

export class SsoDomainDto {
  @ApiProperty({ example: 'bigcorp.example' }) domain: string;
  @ApiProperty({
    enum: SSO_DOMAIN_STATUSES,
    description:
      '`pending`: not proven yet, routes nothing. `verified`: the record was found, and the domain routes sign-in, ' +
      'provisions accounts and enforces SSO. `failing`: the record has been missing for 7 days; the domain no ' +
      'longer routes until it is verified again.',
  })
  status: SsoDomainStatus;
  @ApiProperty({
    type: DnsRecordDto,
    description: 'The TXT record to publish (and keep) at the domain’s DNS.',
  })
  record: DnsRecordDto;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) verifiedAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastCheckedAt: string | null;
}

export function toSsoDomainResponse(row: SsoDomainClaimRow): SsoDomainDto {
  return {
    domain: row.domain,
    status: row.status,
    record: { type: 'TXT', name: challengeRecordName(row.domain), value: row.challenge },
    verifiedAt: row.verifiedAt?.toISOString() ?? null,
    lastCheckedAt: row.lastCheckedAt?.toISOString() ?? null,
  };
}
