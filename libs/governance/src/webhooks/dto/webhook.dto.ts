import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { IfPresent, OBJECT_ID_PATTERN, PaginationQueryDto } from '#platform';
import { urlHost } from '../target-url.js';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../webhook-events.js';
import type { DeliveryStatus, WebhookDeliveryRow, WebhookRow } from '../webhook.schema.js';

export const URL_MAX_LENGTH = 2048;
const DESCRIPTION_MAX_LENGTH = 500;
export const GRACE_MAX_SECONDS = 604_800;
const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed'];
const EVENTS_MESSAGE = `events must be names among ${WEBHOOK_EVENTS.join(', ')}`;

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export class CreateWebhookDto {
  @ApiProperty({
    example: 'https://hooks.example.com/governance',
    maxLength: URL_MAX_LENGTH,
    description:
      'An http or https URL. Its host must resolve to public addresses only (loopback, private, link-local and ' +
      'reserved ones are refused, at creation and at each delivery) unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is set. ' +
      'Write-only: answers show only its scheme and host (`urlHost`, and `url` masked as `<scheme>://<host>/…`).',
  })
  @Transform(trim)
  @IsString()
  @MaxLength(URL_MAX_LENGTH)
  url: string;

  @ApiProperty({
    enum: WEBHOOK_EVENTS,
    enumName: 'GovernanceEventType',
    isArray: true,
    minItems: 1,
    example: ['trace.flagged', 'review.completed'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENTS.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENTS, { each: true, message: EVENTS_MESSAGE })
  events: WebhookEvent[];

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: OBJECT_ID_PATTERN.source,
    description: 'Only this agent’s events (events about no agent are not sent).',
  })
  @ValidateIf((o: CreateWebhookDto) => o.filterAgentId !== undefined && o.filterAgentId !== null)
  @IsString()
  @Matches(OBJECT_ID_PATTERN, { message: 'filterAgentId must be an agent id' })
  filterAgentId?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: DESCRIPTION_MAX_LENGTH })
  @ValidateIf((o: CreateWebhookDto) => o.description !== undefined && o.description !== null)
  @Transform(trim)
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({
    maxLength: URL_MAX_LENGTH,
    description:
      'A new URL (checked again by the SSRF guard). The masked `url` of this webhook sent back as read leaves the ' +
      'URL unchanged.',
  })
  @ValidateIf((o: UpdateWebhookDto) => o.url !== undefined)
  @Transform(trim)
  @IsString()
  @MaxLength(URL_MAX_LENGTH)
  url?: string;

  @ApiPropertyOptional({ enum: WEBHOOK_EVENTS, enumName: 'GovernanceEventType', isArray: true, minItems: 1 })
  @ValidateIf((o: UpdateWebhookDto) => o.events !== undefined)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENTS.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENTS, { each: true, message: EVENTS_MESSAGE })
  events?: WebhookEvent[];

  @ApiPropertyOptional({ type: String, nullable: true, pattern: OBJECT_ID_PATTERN.source })
  @ValidateIf((o: UpdateWebhookDto) => o.filterAgentId !== undefined && o.filterAgentId !== null)
  @IsString()
  @Matches(OBJECT_ID_PATTERN, { message: 'filterAgentId must be an agent id' })
  filterAgentId?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: DESCRIPTION_MAX_LENGTH })
  @ValidateIf((o: UpdateWebhookDto) => o.description !== undefined && o.description !== null)
  @Transform(trim)
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;

  @ApiPropertyOptional({
    description: '`true` enables a webhook disabled by a 410 (and clears `disabledReason`).',
  })
  @ValidateIf((o: UpdateWebhookDto) => o.isActive !== undefined)
  @IsBoolean()
  isActive?: boolean;
}

export class RotateSecretDto {
  @ApiPropertyOptional({
    minimum: 0,
    maximum: GRACE_MAX_SECONDS,
    default: 0,
    description: 'How long the old secret keeps signing beside the new one (both signatures are sent).',
  })
  @IfPresent()
  @IsInt()
  @Min(0)
  @Max(GRACE_MAX_SECONDS)
  gracePeriodSeconds?: number;
}

export class ListDeliveriesQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;
}

export class WebhookDto {
  @ApiProperty() id: string;
  @ApiProperty({
    example: 'https://hooks.example.com/…',
    description:
      'Write-only, like an integration’s URL: shown to every caller (owners included) masked as ' +
      '`<scheme>://<host>/…`. The path, query and credentials, which often carry the receiver’s token, are never ' +
      'answered or audited.',
  })
  url: string;
  @ApiProperty({
    example: 'https://hooks.example.com',
    description:
      'The URL’s scheme and host (with a port other than the default), as `config.urlHost` of integrations.',
  })
  urlHost: string;
  @ApiProperty({ enum: WEBHOOK_EVENTS, enumName: 'GovernanceEventType', isArray: true }) events: string[];
  @ApiProperty({ type: String, nullable: true }) filterAgentId: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty() isActive: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why delivery stopped (a 410 from the receiver).',
  })
  disabledReason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'The signing secret, shown this once (stored encrypted).',
  })
  secret: string;
}

export class WebhookSecretDto {
  @ApiProperty({ description: 'The new signing secret, shown this once.' }) secret: string;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'Until when the previous secret also signs; null without a grace period.',
  })
  previousSecretExpiresAt: string | null;
}

export class WebhookDeliveryDto {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'The event id: the `webhook-id` header of every attempt.' }) eventId: string;
  @ApiProperty({ enum: WEBHOOK_EVENTS }) eventType: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: DeliveryStatus;
  @ApiProperty() attempts: number;
  @ApiProperty({ type: Number, nullable: true }) responseStatus: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'The receiver’s answer, first 1 KiB.' })
  responseBody: string | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) nextAttemptAt: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The delivery this one repeats.' })
  redeliveryOf: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) completedAt: string | null;
}

/**
 * How a webhook's URL is answered: its scheme and host, then `/…` for whatever follows (the URL is write-only:
 * test/webhooks-manage.e2e-spec.ts).
 */
export function maskedWebhookUrl(url: string): string {
  return `${urlHost(url)}/…`;
}

export function toWebhookResponse(row: WebhookRow): WebhookDto {
  return {
    id: row.id,
    url: maskedWebhookUrl(row.url),
    urlHost: urlHost(row.url),
    events: row.events,
    filterAgentId: row.filterAgentId,
    description: row.description,
    isActive: row.isActive,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toDeliveryResponse(row: WebhookDeliveryRow): WebhookDeliveryDto {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType,
    status: row.status,
    attempts: row.attempts,
    responseStatus: row.responseStatus,
    responseBody: row.responseBody,
    error: row.error,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    redeliveryOf: row.redeliveryOf,
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}
