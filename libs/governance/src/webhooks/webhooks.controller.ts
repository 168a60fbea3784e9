import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
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
import {
  CreatedWebhookDto,
  CreateWebhookDto,
  ListDeliveriesQueryDto,
  RotateSecretDto,
  UpdateWebhookDto,
  WebhookDeliveryDto,
  WebhookDto,
  WebhookSecretDto,
} from './dto/webhook.dto.js';
import { DELIVERY_ID, WEBHOOK_DOCS as DOCS, WEBHOOK_ERRORS as ERRORS, WEBHOOK_ID } from './webhooks.docs.js';
import { WebhooksService } from './webhooks.service.js';

/** Webhooks: the organization’s events, signed and delivered with retries. */
@ApiTags('Webhooks')
@Controller('webhooks')
@ApiErrors([401, 403])
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @Endpoint({
    summary: 'List webhooks',
    description: DOCS.list,
    access: { via: ['jwt', 'workspaceKey'], roles: Permission.read },
    success: { model: WebhookDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<WebhookDto>> {
    return this.webhooks.list(actor, query);
  }

  @Post()
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Create a webhook',
    description: DOCS.create,
    access: { via: ['jwt', 'workspaceKey'], roles: Permission.manageOrganization },
    success: { model: CreatedWebhookDto, status: 201 },
    errors: [400, 409],
    errorCodes: ERRORS.create,
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateWebhookDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedWebhookDto> {
    return this.webhooks.create(actor, dto, meta);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a webhook',
    description: DOCS.get,
    access: { via: ['jwt', 'workspaceKey'], roles: Permission.read },
    params: [WEBHOOK_ID],
    success: WebhookDto,
    errors: [404],
    errorCodes: ERRORS.notFound,
  })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<WebhookDto> {
    return this.webhooks.get(actor, id);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Update a webhook',
    description: DOCS.update,
    access: { roles: Permission.manageOrganization },
    params: [WEBHOOK_ID],
    success: WebhookDto,
    errors: [400, 404],
    errorCodes: ERRORS.update,
  })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateWebhookDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<WebhookDto> {
    return this.webhooks.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Delete a webhook',
    description: DOCS.delete,
    access: { via: ['jwt', 'workspaceKey'], roles: Permission.manageOrganization },
    params: [WEBHOOK_ID],
    success: DeletedDto,
    errors: [404],
    errorCodes: ERRORS.notFound,
  })
  delete(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.webhooks.delete(actor, id, meta);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Rotate the signing secret',
    description: DOCS.rotateSecret,
    access: { roles: Permission.manageOrganization },
    params: [WEBHOOK_ID],
    success: WebhookSecretDto,
    errors: [400, 404],
    errorCodes: ERRORS.notFound,
  })
  rotateSecret(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: RotateSecretDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<WebhookSecretDto> {
    return this.webhooks.rotateSecret(actor, id, dto, meta);
  }

  @Post(':id/test')
  @HttpCode(200)
  @Endpoint({
    summary: 'Send a test event',
    description: DOCS.test,
    access: { roles: Permission.manageOrganization },
    params: [WEBHOOK_ID],
    success: WebhookDeliveryDto,
    errors: [404, 409],
    errorCodes: ERRORS.disabled,
  })
  test(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<WebhookDeliveryDto> {
    return this.webhooks.test(actor, id, meta);
  }

  @Get(':id/deliveries')
  @Endpoint({
    summary: 'List a webhook’s deliveries',
    description: DOCS.deliveries,
    access: { roles: Permission.read },
    params: [WEBHOOK_ID],
    success: { model: WebhookDeliveryDto, paginated: true },
    errors: [400, 404],
    errorCodes: ERRORS.notFound,
  })
  deliveries(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: ListDeliveriesQueryDto,
  ): Promise<Page<WebhookDeliveryDto>> {
    return this.webhooks.deliveries(actor, id, query);
  }

  @Post(':id/deliveries/:deliveryId/redeliver')
  @Endpoint({
    summary: 'Redeliver an event',
    description: DOCS.redeliver,
    access: { roles: Permission.manageOrganization },
    params: [WEBHOOK_ID, DELIVERY_ID],
    success: { model: WebhookDeliveryDto, status: 201 },
    errors: [404, 409],
    errorCodes: ERRORS.disabled,
  })
  redeliver(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<WebhookDeliveryDto> {
    return this.webhooks.redeliver(actor, id, deliveryId, meta);
  }
}
