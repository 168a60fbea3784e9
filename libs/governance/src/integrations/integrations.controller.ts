import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  type Page,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import {
  ConfirmRecipientDto,
  CreatedIntegrationDto,
  CreateIntegrationDto,
  IntegrationDeletedDto,
  IntegrationDto,
  IntegrationTestResultDto,
  ListIntegrationsQueryDto,
  RecipientConfirmedDto,
  UpdateIntegrationDto,
} from './dto/integration.dto.js';
import { EmailRecipientsService } from './email-recipients.service.js';
import {
  INTEGRATION_DOCS as DOCS,
  INTEGRATION_ERRORS as ERRORS,
  INTEGRATION_ID,
} from './integrations.docs.js';
import { IntegrationsService } from './integrations.service.js';

/** Notification channels: e-mail, Slack and signed webhooks (docs/compliance-officers.md, "Integrations"). */
@ApiTags('Integrations')
@Controller('integrations')
@ApiErrors([401, 403])
export class IntegrationsController {
  constructor(private readonly integrations: IntegrationsService) {}

  @Get()
  @Endpoint({
    summary: 'List integrations',
    description: DOCS.list,
    access: { roles: Permission.read },
    success: { model: IntegrationDto, paginated: true },
    errors: [400],
  })
  list(
    @CurrentActor() actor: Actor,
    @Query() query: ListIntegrationsQueryDto,
  ): Promise<Page<IntegrationDto>> {
    return this.integrations.list(actor, query);
  }

  @Post()
  @Endpoint({
    summary: 'Create an integration',
    description: DOCS.create,
    access: { roles: Permission.editAgents },
    success: { model: CreatedIntegrationDto, status: 201 },
    errors: [400, 409],
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateIntegrationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedIntegrationDto> {
    return this.integrations.create(actor, dto, meta);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get an integration',
    description: DOCS.get,
    access: { roles: Permission.read },
    params: [INTEGRATION_ID],
    success: IntegrationDto,
    errors: [404],
  })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<IntegrationDto> {
    return this.integrations.get(actor, id);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Update an integration',
    description: DOCS.update,
    access: { roles: Permission.editAgents },
    params: [INTEGRATION_ID],
    success: IntegrationDto,
    errors: [400, 404],
  })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateIntegrationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<IntegrationDto> {
    return this.integrations.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Delete an integration',
    description: DOCS.remove,
    access: { roles: Permission.editAgents },
    params: [INTEGRATION_ID],
    success: IntegrationDeletedDto,
    errors: [404],
  })
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<IntegrationDeletedDto> {
    return this.integrations.remove(actor, id, meta);
  }

  @Post(':id/test')
  @HttpCode(200)
  @Endpoint({
    summary: 'Send a test notification',
    description: DOCS.test,
    access: { roles: Permission.editAgents, rateLimit: 'integrationTest' },
    params: [INTEGRATION_ID],
    success: IntegrationTestResultDto,
    errors: [404, 429],
    errorCodes: ERRORS.test,
  })
  test(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<IntegrationTestResultDto> {
    return this.integrations.test(actor, id);
  }
}

/**
 * The public side of e-mail recipients: the confirmation a non-member's link leads to (docs/compliance-officers.md,
 * "Integrations").
 */
@ApiTags('Integrations')
@Controller('integrations')
export class IntegrationConfirmationController {
  constructor(private readonly recipients: EmailRecipientsService) {}

  @Post('confirm')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Confirm an e-mail recipient',
    description: DOCS.confirm,
    access: 'public',
    success: RecipientConfirmedDto,
    errors: [400, 429],
    errorCodes: ERRORS.confirm,
  })
  confirm(@Body() dto: ConfirmRecipientDto, @ReqMeta() meta: RequestMeta): Promise<RecipientConfirmedDto> {
    return this.recipients.confirm(dto.token, meta);
  }
}
