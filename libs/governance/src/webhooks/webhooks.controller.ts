import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
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
import { WebhooksService } from './webhooks.service.js';

const ID_PARAM = objectIdParam('id', 'Webhook id');
const DELIVERY_PARAM = objectIdParam('deliveryId', 'Delivery id');
const NOT_FOUND = { 404: 'NOT_FOUND (no webhook with this id in the caller’s organization)' };
const URL_REFUSED = {
  400: 'VALIDATION_ERROR, or WEBHOOK_URL_NOT_ALLOWED (the host resolves to a loopback, private, link-local or reserved address)',
};
const DELIVERY_RULES =
  'Deliveries follow Standard Webhooks: a POST of `{type, timestamp, data}` with the headers `webhook-id` (the ' +
  'event id, the same on every retry and redelivery: deduplicate on it), `webhook-timestamp` (Unix seconds) and ' +
  '`webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the secret’s base64 part). ' +
  'A 2xx within 10 s is success; redirects are not followed; failures are retried after about 30 s, 2 min, 10 min, ' +
  '1 h and 6 h (±20 %), a `Retry-After` on 429 or 503 is honoured, and a 410 disables the webhook.';

/** Webhooks: the organization’s events, signed and delivered with retries. */
@ApiTags('Webhooks')
@Controller('webhooks')
@ApiErrors([401, 403])
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.read })
  @ApiOperation({
    summary: 'List webhooks',
    description:
      'Any role, or a workspace key (one scoped to agents sees the webhooks filtered on them). Newest first; limit ' +
      'default 50, max 100. Secrets are never shown again.',
  })
  @ApiEnvelope(WebhookDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<WebhookDto>> {
    return this.webhooks.list(actor, query);
  }

  @Post()
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.manageOrganization })
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Create a webhook',
    description:
      'Owner, admin, or a writable workspace key (a read-only key gets 403; a key scoped to agents must set ' +
      '`filterAgentId` to one of them). Answers the webhook with its `whsec_` signing secret, shown this once and ' +
      `stored encrypted. At most 50 per organization (409). ${DELIVERY_RULES} Writes \`webhook.created\`.`,
  })
  @ApiEnvelope(CreatedWebhookDto, { status: 201 })
  @ApiErrors([400, 409], { ...URL_REFUSED, 409: 'CONFLICT (the organization has 50 webhooks)' })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateWebhookDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedWebhookDto> {
    return this.webhooks.create(actor, dto, meta);
  }

  @Get(':id')
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.read })
  @ApiOperation({ summary: 'Get a webhook', description: 'Any role, or a workspace key.' })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(WebhookDto)
  @ApiErrors([404], NOT_FOUND)
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<WebhookDto> {
    return this.webhooks.get(actor, id);
  }

  @Patch(':id')
  @Access({ roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'Update a webhook',
    description:
      'Owner or admin. Any of `url` (checked again by the SSRF guard), `events`, `filterAgentId`, `description` ' +
      'and `isActive` (`true` enables a webhook a 410 disabled). Writes `webhook.updated`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(WebhookDto)
  @ApiErrors([400, 404], { ...NOT_FOUND, ...URL_REFUSED })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateWebhookDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<WebhookDto> {
    return this.webhooks.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Access({ via: ['jwt', 'workspaceKey'], roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'Delete a webhook',
    description:
      'Owner, admin, or a writable workspace key. Its pending deliveries are not sent. Writes `webhook.deleted`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(DeletedDto)
  @ApiErrors([404], NOT_FOUND)
  delete(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.webhooks.delete(actor, id, meta);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @Access({ roles: Permission.manageOrganization })
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Rotate the signing secret',
    description:
      'Owner or admin. Answers the new secret, shown this once. With `gracePeriodSeconds` (0 to 604800, default ' +
      '0) the old secret keeps signing for that long: deliveries then carry both signatures, space-separated in ' +
      '`webhook-signature`; with 0 only the new one. Writes `webhook.secret_rotated`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(WebhookSecretDto)
  @ApiErrors([400, 404], NOT_FOUND)
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
  @Access({ roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'Send a test event',
    description:
      'Owner or admin. Sends `webhook.test` to this webhook, whatever it subscribes to, and answers the delivery ' +
      'after its first attempt (up to 10 s): `status` `succeeded`, or `pending` with the error and the next ' +
      'attempt. A disabled webhook gets 409 `WEBHOOK_DISABLED`. Writes `webhook.tested`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(WebhookDeliveryDto)
  @ApiErrors([404, 409], { ...NOT_FOUND, 409: 'WEBHOOK_DISABLED' })
  test(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<WebhookDeliveryDto> {
    return this.webhooks.test(actor, id, meta);
  }

  @Get(':id/deliveries')
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'List a webhook’s deliveries',
    description:
      'Any role. Newest first; limit default 50, max 100; `status` filters. Each delivery shows its attempts, the ' +
      'last answer (status and the first 1 KiB of the body) or error, and when the next attempt runs. Kept as ' +
      'long as events (EVENT_RETENTION_DAYS).',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(WebhookDeliveryDto, { paginated: true })
  @ApiErrors([400, 404], NOT_FOUND)
  deliveries(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: ListDeliveriesQueryDto,
  ): Promise<Page<WebhookDeliveryDto>> {
    return this.webhooks.deliveries(actor, id, query);
  }

  @Post(':id/deliveries/:deliveryId/redeliver')
  @Access({ roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'Redeliver an event',
    description:
      'Owner or admin. A new delivery of the same event (the same `webhook-id`, so receivers can tell), answered ' +
      'after its first attempt. A disabled webhook gets 409 `WEBHOOK_DISABLED`; an event past its retention 404. ' +
      'Writes `webhook.redelivered`.',
  })
  @ApiParam(ID_PARAM)
  @ApiParam(DELIVERY_PARAM)
  @ApiEnvelope(WebhookDeliveryDto, { status: 201 })
  @ApiErrors([404, 409], { ...NOT_FOUND, 409: 'WEBHOOK_DISABLED' })
  redeliver(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<WebhookDeliveryDto> {
    return this.webhooks.redeliver(actor, id, deliveryId, meta);
  }
}
