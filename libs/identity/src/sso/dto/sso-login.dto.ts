import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, MaxLength } from 'class-validator';

export class SsoInitiateDto {
  @ApiProperty({
    example: 'alice@example.com',
    description: 'The user’s e-mail; its domain picks the organization.',
  })
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim().toLowerCase() : value,
  )
  @IsEmail({}, { message: 'email must be an e-mail address' })
  @MaxLength(254)
  email: string;
}

export class SsoInitiateResultDto {
  @ApiProperty({
    description:
      'Where to send the browser: the IdP’s authorization URL for an SSO domain, else APP_URL/login?sso=unavailable.',
  })
  redirectUrl: string;
}

export class OAuthTokenDto {
  @ApiProperty({
    description: 'The session JWT the SSO or social callback left in the svc_oauth_token cookie.',
  })
  token: string;
}

export class SsoMfaExchangeDto {
  @ApiProperty({ description: 'The tempToken to post with a TOTP code to /auth/mfa/login.' })
  tempToken: string;
}
