import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { IsStrongPassword, PASSWORD_MAX_LENGTH } from '../password.js';
import { emailTransform } from '../../users/email-address.js';

export class EmailDto {
  @ApiProperty({ example: 'ada@example.com', format: 'email' })
  @Transform(emailTransform)
  @IsEmail({}, { message: 'email must be a valid e-mail address' })
  @MaxLength(254)
  email: string;
}

export class EmailTokenDto {
  @ApiProperty({ description: 'The token from the e-mail link.' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  token: string;
}

export class ResetPasswordDto extends EmailTokenDto {
  @ApiProperty({
    description: 'New password: at least 10 characters with upper case, lower case and a digit.',
    example: 'New-Secret-123',
  })
  @IsStrongPassword()
  password: string;
}

export class ChangePasswordDto {
  @ApiProperty()
  @IsString()
  @IsNotEmpty()
  @MaxLength(PASSWORD_MAX_LENGTH)
  currentPassword: string;

  @ApiProperty({
    description: 'At least 10 characters with upper case, lower case and a digit.',
    example: 'New-Secret-123',
  })
  @IsStrongPassword()
  newPassword: string;
}

export class PlaceholderDto {
  @ApiProperty({ enum: [false] }) available: false;
  @ApiProperty({ example: 'Passkeys are not available yet.' }) message: string;
}
