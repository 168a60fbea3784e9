import { Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
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
import { ScimTokenCreatedDto, ScimTokenDeletedDto, ScimTokenStatusDto } from './dto/scim-token.dto.js';
import { ScimTokensService } from './scim-tokens.service.js';

const WHO = 'Owner or admin, on plans with `scim` (Enterprise).';
const OWNER =
  'Owner only, on plans with `scim` (Enterprise): the token provisions, deactivates and re-roles members, owners ' +
  'included, so an admin may see whether it exists but not mint or revoke it.';

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
  @Access({ roles: Permission.connectIdentityProvider, feature: 'scim' })
  @ApiOperation({
    summary: 'Generate the SCIM token',
    description:
      `${OWNER} Answers the token once (\`scim_\` and 48 hexadecimal characters); only its SHA-256 is kept. A new ` +
      'token revokes the previous one at once (it then gets 401). Writes `scim.token.created`.',
  })
  @ApiEnvelope(ScimTokenCreatedDto)
  rotate(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<ScimTokenCreatedDto> {
    return this.tokens.rotate(actor, meta);
  }

  @Get()
  @Access({ roles: Permission.manageOrganization, feature: 'scim' })
  @ApiOperation({ summary: 'Whether a SCIM token exists, when it was made and last used', description: WHO })
  @ApiEnvelope(ScimTokenStatusDto)
  status(@CurrentActor() actor: Actor): Promise<ScimTokenStatusDto> {
    return this.tokens.status(actor);
  }

  @Delete()
  @Access({ roles: Permission.connectIdentityProvider, feature: 'scim' })
  @ApiOperation({
    summary: 'Revoke the SCIM token',
    description: `${OWNER} The token stops working at once. Writes \`scim.token.revoked\` when there was one.`,
  })
  @ApiEnvelope(ScimTokenDeletedDto)
  revoke(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<ScimTokenDeletedDto> {
    return this.tokens.revoke(actor, meta);
  }
}
