import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { UserDto } from '../../users/user.mapper.js';
import { OrganizationDto } from '../../organizations/dto/organization.dto.js';
import { IsStrongPassword, PASSWORD_MAX_LENGTH } from '../password.js';
import { emailTransform } from '../../users/email-address.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class RegisterDto {
  @ApiProperty({ example: 'Ada Lovelace', maxLength: 200 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;

  @ApiProperty({ example: 'ada@example.com', format: 'email' })
  @Transform(emailTransform)
  @IsEmail({}, { message: 'email must be a valid e-mail address' })
  @MaxLength(254)
  email: string;

  @ApiProperty({
    example: 'Correct-Horse-9',
    minLength: 10,
    maxLength: PASSWORD_MAX_LENGTH,
    description: 'At least 10 characters with an uppercase letter, a lowercase letter and a digit.',
  })
  @IsStrongPassword()
  password: string;

  @ApiProperty({ example: 'Analytical Engines Ltd', maxLength: 200 })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  organizationName: string;
}

export class LoginDto {
  @ApiProperty({ example: 'ada@example.com', format: 'email' })
  @Transform(emailTransform)
  @IsString()
  @IsNotEmpty()
  @MaxLength(254)
  email: string;

  @ApiProperty({ example: 'Correct-Horse-9' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(PASSWORD_MAX_LENGTH)
  password: string;
}

export class RegisterResultDto {
  @ApiProperty({ description: 'JWT (HS256) for the new session.' }) token: string;
  @ApiProperty({ type: UserDto }) user: UserDto;
  @ApiProperty({ type: OrganizationDto }) organization: OrganizationDto;
}

export class LoginResultDto {
  @ApiProperty({ description: 'JWT (HS256) for the new session.' }) token: string;
  @ApiProperty({ type: UserDto }) user: UserDto;
}

export class MfaChallengeDto {
  @ApiProperty({ enum: [true] }) mfaRequired: true;
  @ApiProperty({ description: 'Purpose-bound token (5 minutes) to post with the code to /auth/mfa/login.' })
  tempToken: string;
}

export class MeOrganizationDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['sandbox', 'scale', 'governance', 'enterprise', 'custom'] }) plan: string;
  @ApiProperty({ type: [String], example: ['friaWizard', 'sso'] }) features: string[];
}

export class MeDto {
  @ApiProperty({ type: UserDto }) user: UserDto;
  @ApiProperty({ type: MeOrganizationDto }) organization: MeOrganizationDto;
  @ApiProperty({ enum: ['owner', 'admin', 'member', 'viewer'] }) role: string;
}

export class MessageDto {
  @ApiProperty({ example: 'Logged out' }) message: string;
}
