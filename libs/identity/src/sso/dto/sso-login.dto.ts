import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEmail, IsString, Matches, MaxLength } from 'class-validator';
import { OBJECT_ID_PATTERN } from '#platform';
import { emailTransform } from '../../users/email-address.js';

export class SsoInitiateDto {
  @ApiProperty({
    example: 'alice@example.com',
    description: 'The user’s e-mail; its domain picks the organization.',
  })
  @Transform(emailTransform)
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

export class SamlInitiateDto {
  @ApiProperty({
    example: '65f1c0ffee0000000000abcd',
    description: 'The organization that signs in with SAML.',
  })
  @IsString()
  @Matches(OBJECT_ID_PATTERN, { message: 'organizationId must be a 24-character hexadecimal id' })
  organizationId: string;
}

export class SamlRedirectDto {
  @ApiProperty({
    description:
      'Where to send the browser: the IdP’s SAML entry point (or logout URL) carrying a deflated request on the ' +
      'HTTP-Redirect binding, signed in the query when the service has a SAML signing key.',
  })
  redirectUrl: string;
}
