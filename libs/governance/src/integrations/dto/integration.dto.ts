import { ApiProperty, ApiPropertyOptional, type SchemaObject } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsObject, IsString, MaxLength, MinLength } from 'class-validator';
import { IfPresent, PaginationQueryDto } from '#platform';
import { readRecipients, recipientsView } from '../email-recipients.js';
import type { IntegrationRow, IntegrationType } from '../integration.schema.js';

export const INTEGRATION_TYPES: readonly IntegrationType[] = ['email', 'slack', 'webhook'];
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);
const CONFIG_DOC =
  'email: `{recipients: [1 to 20 addresses]}`: active members of the organization are confirmed at once; any other ' +
  'address gets one message with a confirmation link (valid 7 days, single use) and nothing else until it confirms ' +
  '(`POST /integrations/confirm`); an address already confirmed stays so; 429 RATE_LIMITED past 50 confirmation ' +
  'mails per organization per hour. slack and webhook: `{url}` (absolute http(s), refused when it resolves to a ' +
  'private address: 400 WEBHOOK_URL_NOT_ALLOWED). The URL is write-only.';

/** The `config` an integration takes: recipients for e-mail, a URL for Slack and webhooks (checked by the service). */
const CONFIG_SCHEMA: { oneOf: SchemaObject[] } = {
  oneOf: [
    {
      type: 'object',
      title: 'email',
      required: ['recipients'],
      additionalProperties: false,
      properties: {
        recipients: {
          type: 'array',
          minItems: 1,
          maxItems: 20,
          items: { type: 'string', format: 'email', maxLength: 254 },
        },
      },
    },
    {
      type: 'object',
      title: 'slack, webhook',
      required: ['url'],
      additionalProperties: false,
      properties: { url: { type: 'string', format: 'uri', maxLength: 2048, writeOnly: true } },
    },
  ],
};

export class CreateIntegrationDto {
  @ApiProperty({ enum: INTEGRATION_TYPES })
  @IsIn(INTEGRATION_TYPES, { message: `type must be one of ${INTEGRATION_TYPES.join(', ')}` })
  type: IntegrationType;

  @ApiProperty({ minLength: 1, maxLength: 120, description: 'Trimmed.' })
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(120)
  name: string;

  @ApiProperty({
    ...CONFIG_SCHEMA,
    description: CONFIG_DOC,
    example: { url: 'https://hooks.slack.com/services/T000/B000/XXXX' },
  })
  @IsObject()
  config: Record<string, unknown>;
}

export class UpdateIntegrationDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 120 })
  @IfPresent()
  @Transform(trim)
  @IsString()
  @MinLength(1)
  @MaxLength(120)
  name?: string;

  @ApiPropertyOptional({ ...CONFIG_SCHEMA, description: `Replaces it. ${CONFIG_DOC}` })
  @IfPresent()
  @IsObject()
  config?: Record<string, unknown>;
}

export class ListIntegrationsQueryDto extends PaginationQueryDto {}

export class IntegrationConfigDto {
  @ApiPropertyOptional({ type: [String], description: 'email: every recipient, confirmed or not, in order.' })
  recipients?: string[];
  @ApiPropertyOptional({
    type: [String],
    description:
      'email: the recipients that have not confirmed yet and receive nothing (addresses only). An address that ' +
      'belongs to an active member of the organization receives anyway.',
  })
  pending?: string[];
  @ApiPropertyOptional({
    description: 'slack, webhook: the URL’s scheme and host; the URL itself is never shown.',
    example: 'https://hooks.slack.com',
  })
  urlHost?: string;
}

export class IntegrationDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: INTEGRATION_TYPES }) type: IntegrationType;
  @ApiProperty() name: string;
  @ApiProperty({ type: IntegrationConfigDto }) config: IntegrationConfigDto;
  @ApiProperty({ type: String, nullable: true, description: 'User id of the creator.' }) createdBy:
    string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class CreatedIntegrationDto extends IntegrationDto {
  @ApiPropertyOptional({
    description: 'webhook only: the `whsec_` signing secret (Standard Webhooks), shown this once.',
  })
  secret?: string;
}

export class IntegrationTestResultDto {
  @ApiProperty({ description: 'Whether the channel accepted the test message.' }) delivered: boolean;
  @ApiPropertyOptional({ description: 'slack, webhook: the receiver’s HTTP status.' }) status?: number;
  @ApiPropertyOptional({
    description:
      'email: the messages the mail server accepted, one per confirmed recipient (pending ones get nothing).',
  })
  sent?: number;
  @ApiPropertyOptional({ description: 'Why it was not delivered.' }) error?: string;
}

export class IntegrationDeletedDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: [true] }) deleted: true;
}

export class ConfirmRecipientDto {
  @ApiProperty({
    description: 'The token of the confirmation link (`APP_URL/integrations/confirm?token=…`).',
    maxLength: 200,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  token: string;
}

export class RecipientConfirmedDto {
  @ApiProperty({ description: 'The integration the address now receives notifications of.' })
  integrationId: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: [true] }) confirmed: true;
}

export function toIntegrationResponse(row: IntegrationRow): IntegrationDto {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    config:
      row.type === 'email'
        ? recipientsView(readRecipients(row.recipients))
        : { urlHost: row.urlHost ?? undefined },
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
