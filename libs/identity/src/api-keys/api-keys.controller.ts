import { Body, Controller, Delete, Get, Header, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  DeletedDto,
  objectIdParam,
  type Page,
  PaginationQueryDto,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { ApiKeysService } from './api-keys.service.js';
import { ApiKeyDto, CreateApiKeyDto, CreatedApiKeyDto, UpdateApiKeyDto } from './dto/api-key.dto.js';

const ID_PARAM = objectIdParam('id', 'Key id');
const NOT_FOUND = { 404: 'NOT_FOUND (no live workspace key with this id in the caller’s organization)' };
const AGENT_IDS_RULE =
  'Every id in `scope.agentIds` must be an agent of the caller’s organization: an unknown, deleted or other ' +
  'organization’s agent id is a 400 VALIDATION_ERROR with a detail naming its position (`scope.agentIds.0`), ' +
  'the same answer in each case, and nothing is stored.';

/** Workspace API keys. Managed from a user session only: a key cannot mint or change keys. */
@ApiTags('Auth')
@Controller('auth/keys')
@ApiErrors([401, 403])
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @Access({ roles: Permission.manageOrganization })
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Create a workspace API key',
    description:
      'Owner or admin. Returns the `svc_live_` key once: only its SHA-256 is stored and it cannot be shown again. ' +
      `Send it as \`X-API-Key\`. ${AGENT_IDS_RULE} Writes \`auth.key_created\` (name, prefix and scope; never ` +
      'the key).',
  })
  @ApiEnvelope(CreatedApiKeyDto, { status: 201 })
  @ApiErrors([400])
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateApiKeyDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedApiKeyDto> {
    return this.keys.create(actor, dto, meta);
  }

  @Get()
  @Access({ roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'List workspace API keys',
    description:
      'Owner or admin. Live (not revoked) keys, newest first, with their prefix only. limit default 50, max 100.',
  })
  @ApiEnvelope(ApiKeyDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<ApiKeyDto>> {
    return this.keys.list(actor, query);
  }

  @Patch(':id')
  @Access({ roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'Rename a workspace API key or change its scope',
    description:
      'Owner or admin. `scope` is merged: only the fields sent change (`agentIds: null` lifts the agent restriction). ' +
      `${AGENT_IDS_RULE} Takes effect on the key’s next request. Writes \`auth.key_updated\` when something ` +
      'changed.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(ApiKeyDto)
  @ApiErrors([400, 404], NOT_FOUND)
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateApiKeyDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ApiKeyDto> {
    return this.keys.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Access({ roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'Revoke a workspace API key',
    description:
      'Owner or admin. The key is refused (401) from the next request on; it is kept, revoked, for the audit trail. ' +
      'Writes `auth.key_revoked`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(DeletedDto)
  @ApiErrors([404], NOT_FOUND)
  revoke(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.keys.revoke(actor, id, meta);
  }
}
