import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsIn, IsNotEmpty, IsString, MaxLength, ValidateIf } from 'class-validator';
import { IfPresent, type Role, ROLES } from '#platform';
import { IsStrongPassword, PASSWORD_MAX_LENGTH } from '../../auth/password.js';
import { OrganizationDto } from '../../organizations/dto/organization.dto.js';
import { UserDto } from '../../users/user.mapper.js';
import type { InvitationView } from '../invitations.repository.js';
import { emailTransform } from '../../users/email-address.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/** Why a token does not admit its holder (validate route). */
export const INVITE_INVALID_REASONS = ['expired', 'revoked', 'used', 'not_found'] as const;
export type InviteInvalidReason = (typeof INVITE_INVALID_REASONS)[number];

export class CreateInvitationDto {
  @ApiProperty({ example: 'grace@example.com', format: 'email', maxLength: 254 })
  @Transform(emailTransform)
  @IsEmail({}, { message: 'email must be a valid e-mail address' })
  @MaxLength(254)
  email: string;

  @ApiPropertyOptional({
    enum: ROLES,
    default: 'member',
    description: 'Role given on acceptance. Only an owner may invite an owner.',
  })
  @IfPresent()
  @IsIn(ROLES, { message: `role must be one of: ${ROLES.join(', ')}` })
  role?: Role;
}

export class AcceptInvitationDto {
  @ApiPropertyOptional({
    example: 'Grace Hopper',
    maxLength: 200,
    description: 'Required when the invited e-mail has no account yet; ignored otherwise.',
  })
  @ValidateIf((o: AcceptInvitationDto) => o.name !== undefined)
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({
    example: 'Correct-Horse-9',
    minLength: 10,
    maxLength: PASSWORD_MAX_LENGTH,
    description:
      'Required when the invited e-mail has no account yet (at least 10 characters with an uppercase letter, ' +
      'a lowercase letter and a digit); ignored otherwise.',
  })
  @ValidateIf((o: AcceptInvitationDto) => o.password !== undefined)
  @IsStrongPassword()
  password?: string;
}

export class InviterDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: String, format: 'email', nullable: true }) email: string | null;
}

export class InvitationDto {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ enum: ROLES }) role: Role;
  @ApiProperty({ format: 'date-time', description: 'Creation (or last resend) plus 7 days.' })
  expiresAt: string;
  @ApiProperty({ type: InviterDto }) invitedBy: InviterDto;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class InviteValidationDto {
  @ApiProperty() valid: boolean;
  @ApiPropertyOptional({ description: 'Only when valid.' }) organizationName?: string;
  @ApiPropertyOptional({ enum: ROLES, description: 'Only when valid.' }) role?: Role;
  @ApiPropertyOptional({ type: String, format: 'email', nullable: true, description: 'Only when valid.' })
  inviterEmail?: string | null;
  @ApiPropertyOptional({ enum: INVITE_INVALID_REASONS, description: 'Only when not valid.' })
  reason?: InviteInvalidReason;
}

export class AcceptedInvitationDto {
  @ApiProperty({ description: 'JWT (HS256) for a session in the organization of the invitation.' })
  token: string;
  @ApiProperty({ type: UserDto }) user: UserDto;
  @ApiProperty({ type: OrganizationDto }) organization: OrganizationDto;
  @ApiProperty({ enum: ROLES }) role: Role;
}

/** An invitation as the inviting organization sees it: never the token or its hash. */
export function toInvitationResponse(row: InvitationView): InvitationDto {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    expiresAt: row.expiresAt.toISOString(),
    invitedBy: { id: row.invitedBy.id, email: row.invitedBy.email },
    createdAt: row.createdAt.toISOString(),
  };
}

export function toValidInviteResponse(input: {
  organizationName: string;
  role: Role;
  inviterEmail: string | null;
}): InviteValidationDto {
  return {
    valid: true,
    organizationName: input.organizationName,
    role: input.role,
    inviterEmail: input.inviterEmail,
  };
}

export function toInvalidInviteResponse(reason: InviteInvalidReason): InviteValidationDto {
  return { valid: false, reason };
}
