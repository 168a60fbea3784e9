import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsFQDN,
  IsIn,
  IsObject,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { IfPresent } from '#platform';
import { MAPPABLE_ROLES, type MappableRole, ROLE_PATTERN_MAX, ROLE_RULES_MAX } from '../role-mapping.js';
import type { SsoProvider } from '../sso-config.types.js';
import type { SsoDomainStatus } from '../sso.schema.js';
import { domainTransform } from './sso-domain.dto.js';

export const SSO_PROVIDERS: readonly SsoProvider[] = ['oidc', 'saml'];
export const SSO_DOMAINS_MAX = 20;
const URL_MAX = 2048;
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
/**
 * Domains as POST /sso/domains reads one (`domainTransform`: NFKC, trimmed, lower-cased, no trailing dot), then
 * de-duplicated, before they are validated: a domain written in full-width letters or with a final dot is the same
 * claim, never a second one that looks alike.
 */
const domainsTransform = ({ value }: { value: unknown }) =>
  Array.isArray(value) && value.length <= 200 && value.every((v) => typeof v === 'string')
    ? [...new Set((value as string[]).map((v) => domainTransform({ value: v }) as string))]
    : value;

export class RoleMappingRuleDto {
  @ApiProperty({
    maxLength: ROLE_PATTERN_MAX,
    description: 'An RE2 regular expression (linear time), matched anywhere in a group name, case-sensitive.',
    example: '^governance-admins$',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(ROLE_PATTERN_MAX)
  pattern: string;

  @ApiProperty({ enum: MAPPABLE_ROLES, description: 'A directory group never grants ownership.' })
  @IsIn(MAPPABLE_ROLES, { message: `role must be one of ${MAPPABLE_ROLES.join(', ')}` })
  role: MappableRole;
}

export class OidcSettingsDto {
  @ApiProperty({ maxLength: URL_MAX, example: 'https://login.microsoftonline.com/<tenant>/v2.0' })
  @Transform(trim)
  @IsString()
  @MaxLength(URL_MAX)
  issuer: string;

  @ApiProperty({ maxLength: 256 })
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  clientId: string;

  @ApiPropertyOptional({
    maxLength: 1024,
    writeOnly: true,
    description:
      'Write-only; stored encrypted. Required when there is none yet or the issuer or client id changes; omitted, ' +
      'the stored one is kept.',
  })
  @IfPresent()
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  clientSecret?: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: 20,
    description: 'Default `openid email profile`; `openid` is always added.',
  })
  @IfPresent()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(100, { each: true })
  scopes?: string[];

  @ApiPropertyOptional({
    maxLength: 100,
    description: 'The ID-token claim listing groups (default `groups`).',
  })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  groupsClaim?: string;
}

export class SamlSettingsDto {
  @ApiProperty({ maxLength: URL_MAX, description: 'The IdP’s single sign-on URL (HTTP-Redirect binding).' })
  @Transform(trim)
  @IsString()
  @MaxLength(URL_MAX)
  entryPoint: string;

  @ApiProperty({
    maxLength: 20_000,
    description: 'The IdP’s signing certificate: PEM, or its base64 body as IdP metadata shows it.',
  })
  @IsString()
  @MaxLength(20_000)
  idpCertificate: string;

  @ApiPropertyOptional({
    maxLength: 1024,
    description: 'The IdP’s entity id; when set, responses must name it.',
  })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  idpIssuer?: string;

  @ApiPropertyOptional({ maxLength: 256, description: 'The attribute listing groups (default `groups`).' })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(256)
  groupsAttribute?: string;

  @ApiPropertyOptional({ maxLength: URL_MAX, description: 'The IdP’s single logout URL.' })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @MaxLength(URL_MAX)
  logoutUrl?: string;
}

export class PutSsoConfigDto {
  @ApiProperty({ enum: SSO_PROVIDERS })
  @IsIn(SSO_PROVIDERS, { message: 'provider must be oidc or saml' })
  provider: SsoProvider;

  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: SSO_DOMAINS_MAX,
    description:
      'E-mail domains that sign in through this organization; each belongs to one organization at most. Read as ' +
      '`POST /sso/domains` reads one: NFKC-normalised, lower-cased, without a trailing dot.',
    example: ['example.com'],
  })
  @Transform(domainsTransform)
  @IsArray()
  @ArrayMinSize(1, { message: 'emailDomains must list at least 1 domain' })
  @ArrayMaxSize(SSO_DOMAINS_MAX, { message: `emailDomains must list at most ${SSO_DOMAINS_MAX} domains` })
  @IsFQDN(
    { require_tld: true, allow_underscores: false },
    { each: true, message: 'each of emailDomains must be a domain name' },
  )
  @MaxLength(253, { each: true })
  emailDomains: string[];

  @ApiPropertyOptional({ default: false, description: 'SSO logins then also ask for the TOTP code.' })
  @IfPresent()
  @IsBoolean()
  requireMfaEvenWithSso?: boolean;

  @ApiPropertyOptional({
    default: false,
    description:
      'Users whose address is in a verified domain of the organization must sign in through its SSO: password ' +
      'login, magic links, social login, password reset and `switch-org` into the organization answer 403 ' +
      '`SSO_REQUIRED` (owners keep password + TOTP, audited as `auth.sso_break_glass`). Needs a verified domain, ' +
      'and the IdP settings being saved must be the ones whose last `POST /sso/config/test` passed.',
  })
  @IfPresent()
  @IsBoolean()
  enforceSso?: boolean;

  @ApiPropertyOptional({
    type: [RoleMappingRuleDto],
    maxItems: ROLE_RULES_MAX,
    description: 'In order; the first rule matching any of the user’s groups gives the role; none: member.',
  })
  @IfPresent()
  @IsArray()
  @ArrayMaxSize(ROLE_RULES_MAX)
  @ValidateNested({ each: true })
  @Type(() => RoleMappingRuleDto)
  roleMappingRules?: RoleMappingRuleDto[];

  @ApiPropertyOptional({ type: OidcSettingsDto, description: 'Required with provider oidc.' })
  @IfPresent()
  @IsObject()
  @ValidateNested()
  @Type(() => OidcSettingsDto)
  oidc?: OidcSettingsDto;

  @ApiPropertyOptional({ type: SamlSettingsDto, description: 'Required with provider saml.' })
  @IfPresent()
  @IsObject()
  @ValidateNested()
  @Type(() => SamlSettingsDto)
  saml?: SamlSettingsDto;
}

export class OidcSettingsView {
  @ApiProperty() issuer: string;
  @ApiProperty() clientId: string;
  @ApiProperty({ description: 'Whether a client secret is stored (it is never shown).' })
  clientSecretSet: boolean;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty() groupsClaim: string;
  @ApiProperty({ description: 'The redirect URI to register at the IdP.' }) redirectUri: string;
}

export class CertificateView {
  @ApiProperty() subject: string;
  @ApiProperty({ format: 'date-time' }) validFrom: string;
  @ApiProperty({ format: 'date-time' }) validTo: string;
  @ApiProperty({ description: 'SHA-256 fingerprint, colon-separated hex.' }) fingerprint256: string;
}

export class SamlSettingsView {
  @ApiProperty() entryPoint: string;
  @ApiProperty({ type: CertificateView }) idpCertificate: CertificateView;
  @ApiProperty({ type: String, nullable: true }) idpIssuer: string | null;
  @ApiProperty() groupsAttribute: string;
  @ApiProperty({ type: String, nullable: true }) logoutUrl: string | null;
  @ApiProperty({ description: 'The SP entity id to register at the IdP.' }) spEntityId: string;
  @ApiProperty({ description: 'The assertion consumer service URL (HTTP-POST).' }) acsUrl: string;
  @ApiProperty({ description: 'The SP metadata document.' }) metadataUrl: string;
  @ApiProperty({ description: 'The single-logout service URL (HTTP-POST) to register at the IdP.' })
  sloUrl: string;
}

export class SsoDomainStateDto {
  @ApiProperty({ example: 'bigcorp.example' }) domain: string;
  @ApiProperty({ enum: ['pending', 'verified', 'failing'] }) status: SsoDomainStatus;
}

export class SsoConfigDto {
  @ApiProperty({ enum: SSO_PROVIDERS }) provider: SsoProvider;
  @ApiProperty({
    type: [String],
    description:
      'The domains the organization claims, as written (by this PUT or `POST /sso/domains`); only verified ones ' +
      'route sign-in, provision accounts or enforce anything (see `domains`).',
  })
  emailDomains: string[];
  @ApiProperty({
    type: [SsoDomainStateDto],
    description: 'Each claimed domain’s state; `GET /sso/domains` has the records.',
  })
  domains: SsoDomainStateDto[];
  @ApiProperty() requireMfaEvenWithSso: boolean;
  @ApiProperty({ description: 'Whether sign-in through the SSO is enforced for the verified domains.' })
  enforceSso: boolean;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'When the current IdP settings last passed `POST /sso/config/test`; null when they have not (a failed ' +
      'test, or settings changed since). `enforceSso` can be turned on only while it is set.',
  })
  testPassedAt: string | null;
  @ApiProperty({ type: [RoleMappingRuleDto] }) roleMappingRules: RoleMappingRuleDto[];
  @ApiPropertyOptional({ type: OidcSettingsView }) oidc?: OidcSettingsView;
  @ApiPropertyOptional({ type: SamlSettingsView }) saml?: SamlSettingsView;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: String, nullable: true, description: 'User id of the last editor.' }) updatedBy:
    string | null;
}

export class SsoCheckDto {
  @ApiProperty({ example: 'discovery' }) name: string;
  @ApiProperty() ok: boolean;
  @ApiProperty() detail: string;
}

export class SsoTestResultDto {
  @ApiProperty({ description: 'Whether every check passed.' }) ok: boolean;
  @ApiProperty({ type: [SsoCheckDto] }) checks: SsoCheckDto[];
}

export class SsoConfigDeletedDto {
  @ApiProperty({ enum: [true] }) deleted: true;
}
