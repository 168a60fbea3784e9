import { Body, Controller, Delete, Get, HttpCode, Post, Put } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import {
  PutSsoConfigDto,
  SsoConfigDeletedDto,
  SsoConfigDto,
  SsoTestResultDto,
} from './dto/sso-config.dto.js';
import { SsoConfigService } from './sso-config.service.js';

const WHO = 'Owner or admin, on plans with `sso` (Governance and above).';
const OWNER =
  'Owner only, on plans with `sso` (Governance and above): the IdP and its role mapping can sign members in and ' +
  'grant the owner role, so an admin may read the configuration but not write it.';

/**
 * The organization's single sign-on configuration (docs/identity-administrators.md,
 * "Single sign-on: the configuration"; test/sso-config.e2e-spec.ts).
 */
@ApiTags('SSO')
@Controller('sso/config')
@ApiErrors([401, 403])
export class SsoConfigController {
  constructor(private readonly sso: SsoConfigService) {}

  @Get()
  @Access({ roles: Permission.manageOrganization, feature: 'sso' })
  @ApiOperation({
    summary: 'The SSO configuration',
    description:
      `${WHO} The client secret is never shown (\`clientSecretSet\`); the SAML certificate shows as its subject, ` +
      'validity and fingerprint. Also answers what to register at the IdP: the OIDC redirect URI, or the SAML ' +
      'entity id, ACS URL and metadata URL. 404 when SSO is not configured.',
  })
  @ApiEnvelope(SsoConfigDto)
  @ApiErrors([404])
  get(@CurrentActor() actor: Actor): Promise<SsoConfigDto> {
    return this.sso.get(actor);
  }

  @Put()
  @Access({ roles: Permission.connectIdentityProvider, feature: 'sso' })
  @ApiOperation({
    summary: 'Set the SSO configuration',
    description:
      `${OWNER} Replaces the configuration; does not contact the IdP (see the test). Each e-mail domain belongs to ` +
      'one organization at most (409 SSO_DOMAIN_TAKEN). Role-mapping patterns are RE2, at most 256 characters. ' +
      'IdP URLs must be https (`SSO_ALLOW_INSECURE_HTTP` lets http through outside production). Writes ' +
      '`sso.config.update`.',
  })
  @ApiEnvelope(SsoConfigDto)
  @ApiErrors([400, 409])
  put(
    @CurrentActor() actor: Actor,
    @Body() dto: PutSsoConfigDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SsoConfigDto> {
    return this.sso.put(actor, dto, meta);
  }

  @Delete()
  @Access({ roles: Permission.connectIdentityProvider, feature: 'sso' })
  @ApiOperation({
    summary: 'Remove the SSO configuration',
    description: `${OWNER} Frees its e-mail domains. Writes \`sso.config.delete\`.`,
  })
  @ApiEnvelope(SsoConfigDeletedDto)
  @ApiErrors([404])
  remove(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<SsoConfigDeletedDto> {
    return this.sso.remove(actor, meta);
  }

  @Post('test')
  @HttpCode(200)
  @Access({ roles: Permission.manageOrganization, feature: 'sso' })
  @ApiOperation({
    summary: 'Test the SSO configuration against the IdP',
    description:
      `${WHO} OIDC: the issuer's address, discovery (the issuer must match), the code flow, PKCE S256 and the ` +
      'JWKS. SAML: the certificate, its validity now, and the addresses of the entry point and logout URL. ' +
      'Answers `{ok, checks: [{name, ok, detail}]}`; a failing check is not an error.',
  })
  @ApiEnvelope(SsoTestResultDto)
  @ApiErrors([404])
  test(@CurrentActor() actor: Actor): Promise<SsoTestResultDto> {
    return this.sso.test(actor);
  }
}
