import { Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { ScimTokenCreatedDto, ScimTokenDeletedDto, ScimTokenStatusDto } from './dto/scim-token.dto.js';
import { SCIM_TOKEN_DOCS as DOCS } from './scim-token.docs.js';
import { ScimTokensService } from './scim-tokens.service.js';

/**
 * The organization's SCIM bearer token (docs/identity-administrators.md, "SCIM provisioning"), which the IdP's
 * provisioning presents at `/scim/v2`.
 */
@ApiTags('SSO')
@Controller('sso/scim-token')
@ApiErrors([401, 403])
export class ScimTokenController {
  constructor(private readonly tokens: ScimTokensService) {}

  @Post()
  @HttpCode(200)
  @Endpoint({
    summary: 'Generate the SCIM token',
    description: DOCS.rotate,
    access: { roles: Permission.connectIdentityProvider, feature: 'scim' },
    success: ScimTokenCreatedDto,
  })
  rotate(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<ScimTokenCreatedDto> {
    return this.tokens.rotate(actor, meta);
  }

  @Get()
  @Endpoint({
    summary: 'Whether a SCIM token exists, when it was made and last used',
    description: DOCS.status,
    access: { roles: Permission.manageOrganization, feature: 'scim' },
    success: ScimTokenStatusDto,
  })
  status(@CurrentActor() actor: Actor): Promise<ScimTokenStatusDto> {
    return this.tokens.status(actor);
  }

  @Delete()
  @Endpoint({
    summary: 'Revoke the SCIM token',
    description: DOCS.revoke,
    access: { roles: Permission.connectIdentityProvider, feature: 'scim' },
    success: ScimTokenDeletedDto,
  })
  revoke(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<ScimTokenDeletedDto> {
    return this.tokens.revoke(actor, meta);
  }
}
