import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  objectIdParam,
  type Page,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import {
  CreatedIntegrationDto,
  CreateIntegrationDto,
  IntegrationDeletedDto,
  IntegrationDto,
  IntegrationTestResultDto,
  ListIntegrationsQueryDto,
  UpdateIntegrationDto,
} from './dto/integration.dto.js';
import { IntegrationsService } from './integrations.service.js';

const ID_PARAM = objectIdParam('id', 'Integration id');
const EDITORS = 'Owner, admin, or the member who created it.';

/** Notification channels: e-mail, Slack and signed webhooks (contract §18). */
@ApiTags('Integrations')
@Controller('integrations')
@ApiErrors([401, 403])
export class IntegrationsController {
  constructor(private readonly integrations: IntegrationsService) {}

  @Get()
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'List integrations',
    description: 'Any role. Newest first; limit default 50, max 100.',
  })
  @ApiEnvelope(IntegrationDto, { paginated: true })
  @ApiErrors([400])
  list(
    @CurrentActor() actor: Actor,
    @Query() query: ListIntegrationsQueryDto,
  ): Promise<Page<IntegrationDto>> {
    return this.integrations.list(actor, query);
  }

  @Post()
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Create an integration',
    description:
      'Owner, admin or member. A webhook integration answers its `whsec_` signing secret this once. At most 50 ' +
      'per organization (409). Writes `integration.create`.',
  })
  @ApiEnvelope(CreatedIntegrationDto, { status: 201 })
  @ApiErrors([400, 409])
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateIntegrationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedIntegrationDto> {
    return this.integrations.create(actor, dto, meta);
  }

  @Get(':id')
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'Get an integration',
    description: 'Any role. The URL is never shown, only its host.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(IntegrationDto)
  @ApiErrors([404])
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<IntegrationDto> {
    return this.integrations.get(actor, id);
  }

  @Patch(':id')
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Update an integration',
    description: `${EDITORS} name and/or config (replaced whole; the type cannot change). Writes \`integration.update\`.`,
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(IntegrationDto)
  @ApiErrors([400, 404])
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateIntegrationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<IntegrationDto> {
    return this.integrations.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Delete an integration',
    description: `${EDITORS} Writes \`integration.delete\`.`,
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(IntegrationDeletedDto)
  @ApiErrors([404])
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<IntegrationDeletedDto> {
    return this.integrations.remove(actor, id, meta);
  }

  @Post(':id/test')
  @HttpCode(200)
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Send a test notification',
    description:
      `${EDITORS} Sends now and answers whether the channel accepted it: an e-mail to the recipients, a Slack ` +
      'message `{text}`, or a Standard Webhooks envelope of type `integration.test` signed with the secret.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(IntegrationTestResultDto)
  @ApiErrors([404])
  test(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<IntegrationTestResultDto> {
    return this.integrations.test(actor, id);
  }
}
