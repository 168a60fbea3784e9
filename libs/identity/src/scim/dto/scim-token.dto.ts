import { ApiProperty } from '@nestjs/swagger';

export class ScimTokenCreatedDto {
  @ApiProperty({
    example: 'scim_3f9a…',
    description: 'The token, shown this once: `scim_` and 48 hexadecimal characters. Paste it into the IdP.',
  })
  token: string;

  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class ScimTokenStatusDto {
  @ApiProperty() exists: boolean;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) createdAt: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) lastUsedAt: string | null;
}

export class ScimTokenDeletedDto {
  @ApiProperty({ description: 'Whether a token existed (and is now revoked).' }) deleted: boolean;
}
