import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
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
  Public,
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
import { IntegrationsService } from './integrations.service.js';

const ID_PARAM = objectIdParam('id', 'Integration id');
const EDITORS = 'Owner, admin, or the member who created it.';

/** Notification channels: e-mail, Slack and signed webhooks (docs/compliance-officers.md, "Integrations"). */
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
  @Access({ roles: Permission.editAgents, rateLimit: 'integrationTest' })
  @ApiOperation({
    summary: 'Send a test notification',
    description:
      `${EDITORS} Sends now and answers whether the channel accepted it: an e-mail of fixed text to each ` +
      'confirmed recipient, one message per address (pending recipients get nothing; `sent` counts the messages ' +
      'accepted), a Slack message `{text}`, or a Standard Webhooks envelope of type `integration.test` signed with ' +
      'the secret. The integration’s name appears only as quoted data, never in a subject. At most 10 per user ' +
      'and 30 per organization per hour (429 RATE_LIMITED with Retry-After).',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(IntegrationTestResultDto)
  @ApiErrors([404, 429], { 429: 'RATE_LIMITED (10 per user, 30 per organization per hour; see Retry-After)' })
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
  @Public()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Confirm an e-mail recipient',
    description:
      'Public. The token of the link mailed to a recipient who is not a member of the organization ' +
      '(`APP_URL/integrations/confirm?token=…`). Confirms that address for that integration only: it then receives ' +
      'the notifications and test sends. Single use, valid 7 days; an unknown, used or expired token is 400 ' +
      'INVALID_TOKEN. Limited per IP address like the /auth routes (429 RATE_LIMIT_EXCEEDED with Retry-After). ' +
      'Writes `integration.recipient.confirmed`.',
  })
  @ApiEnvelope(RecipientConfirmedDto)
  @ApiErrors([400, 429], {
    400: 'INVALID_TOKEN (unknown, used or expired token), VALIDATION_ERROR',
    429: 'RATE_LIMIT_EXCEEDED (per IP address; see Retry-After)',
  })
  confirm(@Body() dto: ConfirmRecipientDto, @ReqMeta() meta: RequestMeta): Promise<RecipientConfirmedDto> {
    return this.recipients.confirm(dto.token, meta);
  }
}
