import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNotEmpty, IsString, Matches, MaxLength } from 'class-validator';
import { IfPresent, OBJECT_ID_PATTERN } from '#platform';
import { OrganizationDto } from '../../organizations/dto/organization.dto.js';
import type { UserOrganization } from '../../organizations/organizations.repository.js';
import type { LoginEventRow } from '../../sessions/login-event.schema.js';
import { IsBcp47Locale, IsIanaTimeZone, LOCALE_MAX_LENGTH, TIMEZONE_MAX_LENGTH } from '../intl-validation.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
// An explicit null is validated (and refused), not skipped as IsOptional would.

export class UserOrganizationDto {
  @ApiProperty() organizationId: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['owner', 'admin', 'member', 'viewer'] }) role: string;
  @ApiProperty({ enum: ['sandbox', 'scale', 'governance', 'enterprise', 'custom'] }) plan: string;
}

export class SwitchOrgDto {
  @ApiProperty({ example: '65f1c0ffee0000000000abcd' })
  @IsString()
  @Matches(OBJECT_ID_PATTERN, { message: 'organizationId must be a 24-character hexadecimal id' })
  organizationId: string;
}

export class SwitchOrgResultDto {
  @ApiProperty({ description: 'JWT (HS256) bound to the organization switched to.' }) token: string;
  @ApiProperty({ type: OrganizationDto }) organization: OrganizationDto;
  @ApiProperty({ enum: ['owner', 'admin', 'member', 'viewer'] }) role: string;
}

export class UpdateProfileDto {
  @ApiPropertyOptional({ example: 'Ada Lovelace', maxLength: 200 })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({
    example: 'en-GB',
    maxLength: LOCALE_MAX_LENGTH,
    description: 'BCP 47 language tag; stored in canonical form.',
  })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @IsBcp47Locale()
  locale?: string;

  @ApiPropertyOptional({
    example: 'Europe/Paris',
    maxLength: TIMEZONE_MAX_LENGTH,
    description: 'IANA time zone name.',
  })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @IsIanaTimeZone()
  timezone?: string;
}

export class LoginActivityDto {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, nullable: true }) ip: string | null;
  @ApiProperty({ type: String, nullable: true }) userAgent: string | null;
  @ApiProperty({ example: 'password', description: 'password, magic_link, mfa, oauth, sso …' })
  method: string;
  @ApiProperty() success: boolean;
}

export function toUserOrganizationResponse(row: UserOrganization): UserOrganizationDto {
  return { organizationId: row.organizationId, name: row.name, role: row.role, plan: row.plan };
}

export function toLoginActivityResponse(row: LoginEventRow): LoginActivityDto {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    ip: row.ip,
    userAgent: row.userAgent,
    method: row.method,
    success: row.success,
  };
}
