import { Body, Controller, Delete, Get, Header, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  DeletedDto,
  Endpoint,
  type Page,
  PaginationQueryDto,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { API_KEY_DOCS as DOCS, API_KEY_ERRORS as ERRORS, KEY_ID } from './api-keys.docs.js';
import { ApiKeysService } from './api-keys.service.js';
import { ApiKeyDto, CreateApiKeyDto, CreatedApiKeyDto, UpdateApiKeyDto } from './dto/api-key.dto.js';

/** Workspace API keys. Managed from a user session only: a key cannot mint or change keys. */
@ApiTags('Auth')
@Controller('auth/keys')
@ApiErrors([401, 403])
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Create a workspace API key',
    description: DOCS.create,
    access: { roles: Permission.manageOrganization },
    success: { model: CreatedApiKeyDto, status: 201 },
    errors: [400],
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateApiKeyDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedApiKeyDto> {
    return this.keys.create(actor, dto, meta);
  }

  @Get()
  @Endpoint({
    summary: 'List workspace API keys',
    description: DOCS.list,
    access: { roles: Permission.manageOrganization },
    success: { model: ApiKeyDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<ApiKeyDto>> {
    return this.keys.list(actor, query);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Rename a workspace API key or change its scope',
    description: DOCS.update,
    access: { roles: Permission.manageOrganization },
    params: [KEY_ID],
    success: ApiKeyDto,
    errors: [400, 404],
    errorCodes: ERRORS.notFound,
  })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateApiKeyDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ApiKeyDto> {
    return this.keys.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Revoke a workspace API key',
    description: DOCS.revoke,
    access: { roles: Permission.manageOrganization },
    params: [KEY_ID],
    success: DeletedDto,
    errors: [404],
    errorCodes: ERRORS.notFound,
  })
  revoke(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.keys.revoke(actor, id, meta);
  }
}
