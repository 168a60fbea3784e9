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

/** `details` of 403 SSO_REQUIRED: where this address's sign-in starts. */
export class SsoRequiredDetailsDto {
  @ApiProperty({ description: 'The single sign-on dispatcher, which takes `{email}`.' }) ssoUrl: string;
}

/** `record` of 400 DOMAIN_NOT_VERIFIED: the DNS record to publish. */
export class DnsChallengeRecordDto {
  @ApiProperty({ enum: ['TXT'] }) type: 'TXT';
  @ApiProperty({ example: '_governance-challenge.bigcorp.example' }) name: string;
  @ApiProperty() value: string;
}

export class ErrorEnvelopeDto {
  @ApiProperty({ enum: [false] }) success: false;
  @ApiProperty({ description: 'Human-readable message.' }) error: string;
  @ApiProperty({ description: 'Stable machine-readable code.', example: 'VALIDATION_ERROR' }) code: string;
  @ApiPropertyOptional({
    oneOf: [
      { type: 'array', items: { $ref: getSchemaPath(ErrorDetailDto) } },
      { $ref: getSchemaPath(SsoRequiredDetailsDto) },
    ],
    description:
      'Validation errors: one entry per invalid field (at most 20; `detailsTotal` then counts them all). ' +
      '403 SSO_REQUIRED: `{ssoUrl}`.',
  })
  details?: ErrorDetailDto[] | SsoRequiredDetailsDto;
  @ApiPropertyOptional({ description: 'How many details were found, when more than `details` lists.' })
  detailsTotal?: number;
  @ApiPropertyOptional({
    enum: ['ALREADY_MEMBER'],
    description: 'A VALIDATION_ERROR’s reason, where it has one.',
  })
  reason?: string;
  @ApiPropertyOptional({
    type: DnsChallengeRecordDto,
    description: 'DOMAIN_NOT_VERIFIED: the record to publish.',
  })
  record?: DnsChallengeRecordDto;
  @ApiPropertyOptional({
    type: [String],
    description: 'VERSION_UNSUPPORTED: the versions this service knows.',
  })
  supportedVersions?: string[];
  @ApiPropertyOptional({ description: 'UPGRADE_REQUIRED: the plan feature the route needs.' })
  feature?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'SERVICE_UNAVAILABLE from `/health` and `/health/ready`: their checks, as in their 200 answer, with what failed ' +
      '(`database: "down"`, `migrations: "unknown"` or `"pending"`, `draining: true`).',
  })
  checks?: Record<string, unknown>;
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
  503: 'SERVICE_UNAVAILABLE (the service is saturated, or its database cannot serve the request now; see Retry-After)',
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
    ApiExtraModels(ErrorEnvelopeDto, ErrorDetailDto, SsoRequiredDetailsDto, DnsChallengeRecordDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: overrides[status] ?? ERROR_DESCRIPTIONS[status] ?? 'Error',
        schema: { $ref: getSchemaPath(ErrorEnvelopeDto) },
      }),
    ),
  );
}

export interface EnvelopeOptions {
  status?: number;
  description?: string;
  isArray?: boolean;
  paginated?: boolean;
}

/** `{success: true, data: null}`: what a route answers when it has nothing to return (`ApiEnvelope(null)`). */
export class EmptyResponse {
  @ApiProperty({ type: Boolean, enum: [true] }) success: true;
  @ApiProperty({ type: 'null', description: 'Always null: the route returns nothing.' }) data: null;
}

/** The envelope classes made so far, by name: one named schema per model and kind, however many routes use it. */
const ENVELOPES = new Map<string, { model: Type<unknown>; kind: EnvelopeKind; type: Type<unknown> }>();
/** One model (`data: Model`), a list (`data: Model[]`), or a page (a list with `pagination`). */
export type EnvelopeKind = 'one' | 'list' | 'page';

/**
 * The name of the envelope of `model`: the model's name without `Dto`, then `Response` (one), `ListResponse` (an
 * array) or `Page` (a paginated list): `AgentDto` → `AgentResponse`, `AgentListResponse`, `AgentPage`.
 */
export function envelopeName(model: Type<unknown>, kind: EnvelopeKind): string {
  const base = model.name.replace(/Dto$/, '');
  return `${base}${kind === 'one' ? 'Response' : kind === 'list' ? 'ListResponse' : 'Page'}`;
}

/**
 * The named envelope class of `model` (a class, so that @nestjs/swagger puts it in `components.schemas` and
 * refers to it): made once per model and kind and reused, so the same envelope is one schema.
 */
export function envelopeOf(model: Type<unknown>, kind: EnvelopeKind): Type<unknown> {
  const name = envelopeName(model, kind);
  const known = ENVELOPES.get(name);
  if (known) {
    if (known.model !== model || known.kind !== kind) {
      throw new Error(`Two envelopes would be named ${name}: rename ${model.name} or ${known.model.name}`);
    }
    return known.type;
  }
  // A class named by the object literal's key: @nestjs/swagger names the schema after the class.
  const type = { [name]: class {} }[name]!;
  const property = (key: string, options: Parameters<typeof ApiProperty>[0]) =>
    ApiProperty(options)(type.prototype as object, key);
  property('success', { type: Boolean, enum: [true] });
  if (kind === 'one') property('data', { type: () => model });
  else property('data', { type: () => model, isArray: true });
  if (kind === 'page') property('pagination', { type: () => PaginationDto });
  ENVELOPES.set(name, { model, kind, type });
  return type;
}

/**
 * Documents a success response as `{success: true, data: <model>}` (plus `pagination` for paginated lists), as
 * a named schema (`envelopeOf`); `null`: `{success: true, data: null}` (`EmptyResponse`).
 */
export function ApiEnvelope(model: Type<unknown> | null, options: EnvelopeOptions = {}): MethodDecorator {
  const kind: EnvelopeKind = options.paginated ? 'page' : options.isArray ? 'list' : 'one';
  const envelope = model ? envelopeOf(model, kind) : EmptyResponse;
  return applyDecorators(
    ApiExtraModels(envelope),
    ApiResponse({
      status: options.status ?? 200,
      description: options.description ?? 'Success',
      type: envelope,
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
