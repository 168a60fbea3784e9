import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  type ApiParamOptions,
  ApiResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import { OBJECT_ID_PATTERN } from '../ids/object-id.js';

export class ErrorDetailDto {
  @ApiProperty({ example: 'email' }) field: string;
  @ApiProperty({ example: 'email must be an email' }) message: string;
}

export class ErrorEnvelopeDto {
  @ApiProperty({ enum: [false] }) success: false;
  @ApiProperty({ description: 'Human-readable message.' }) error: string;
  @ApiProperty({ description: 'Stable machine-readable code.', example: 'VALIDATION_ERROR' }) code: string;
  @ApiPropertyOptional({
    type: [ErrorDetailDto],
    description: 'One entry per invalid field (validation errors).',
  })
  details?: ErrorDetailDto[];
  @ApiPropertyOptional({ description: 'Request id, on 500 responses; quote it when reporting a problem.' })
  requestId?: string;
}

export class PaginationDto {
  @ApiProperty({ example: 1 }) page: number;
  @ApiProperty({ example: 20 }) limit: number;
  @ApiProperty({ example: 42 }) total: number;
  @ApiProperty({ example: 3 }) totalPages: number;
  @ApiPropertyOptional({
    enum: [true],
    description:
      'Only on lists that stop counting (the audit log with filters): `total` is then a lower bound, the matches ' +
      'counted before the count stopped. Later pages still answer.',
  })
  totalCapped?: true;
}

/** The error codes each status can carry; listed in the description of every documented error response. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'VALIDATION_ERROR (invalid body, query or malformed JSON; `details` lists fields), VERSION_UNSUPPORTED',
  401: 'UNAUTHORIZED (missing or invalid credentials), SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED',
  403:
    'FORBIDDEN (role, key kind, key scope, read-only key), UPGRADE_REQUIRED (plan lacks the feature), ' +
    'ACCOUNT_DEACTIVATED (a write by a session whose membership SCIM deactivated: it reads only), ' +
    'REAUTHENTICATION_REQUIRED (an account-wide change from a session that an organization’s SSO scoped to it)',
  404: 'NOT_FOUND (absent, or in another organization)',
  409: 'CONFLICT',
  410: 'VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned route after 2027-04-12)',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'RATE_LIMIT_EXCEEDED (see Retry-After)',
  500: 'INTERNAL_ERROR (body carries only the request id)',
  503: 'SERVICE_UNAVAILABLE (the service is saturated; see Retry-After)',
};

/**
 * Documents error responses with the error envelope. `overrides` replaces the generic description of a status
 * with route-specific codes.
 */
export function ApiErrors(
  statuses: number[],
  overrides: Record<number, string> = {},
): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorEnvelopeDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: overrides[status] ?? ERROR_DESCRIPTIONS[status] ?? 'Error',
        schema: { $ref: getSchemaPath(ErrorEnvelopeDto) },
      }),
    ),
  );
}

interface EnvelopeOptions {
  status?: number;
  description?: string;
  isArray?: boolean;
  paginated?: boolean;
}

/** Documents a success response as `{success: true, data: <model>}` (plus `pagination` for paginated lists). */
export function ApiEnvelope(model: Type<unknown> | null, options: EnvelopeOptions = {}): MethodDecorator {
  const data = model
    ? options.isArray || options.paginated
      ? { type: 'array', items: { $ref: getSchemaPath(model) } }
      : { $ref: getSchemaPath(model) }
    : { type: 'object', nullable: true };
  const properties: Record<string, unknown> = { success: { type: 'boolean', enum: [true] }, data };
  const required = ['success', 'data'];
  if (options.paginated) {
    properties.pagination = { $ref: getSchemaPath(PaginationDto) };
    required.push('pagination');
  }
  const models = [PaginationDto, ...(model ? [model] : [])];
  return applyDecorators(
    ApiExtraModels(...models),
    ApiResponse({
      status: options.status ?? 200,
      description: options.description ?? 'Success',
      schema: { type: 'object', required, properties: properties as Record<string, never> },
    }),
  );
}

export class DeletedDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: [true] }) deleted: true;
}

/** The OpenAPI description of a path parameter holding an object id: `what` names it (`Agent id`). */
export function objectIdParam(name: string, what: string): ApiParamOptions {
  return {
    name,
    description: `${what} (24 lower-case hex characters).`,
    schema: { type: 'string' as const, pattern: OBJECT_ID_PATTERN.source },
  };
}
