import type { OpenAPIObject } from '@nestjs/swagger';
import { SCHEMA_VERSIONS } from '#platform';

type Schema = Record<string, unknown>;
interface Media {
  schema?: Schema;
  example?: unknown;
  examples?: unknown;
}
interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const isJson = (mediaType: string) => /^application\/([a-z.+-]+\+)?json$/.test(mediaType);
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Schema).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );

/**
 * The names of the JSON bodies that routes describe inline rather than with `ApiEnvelope` or a DTO class, by
 * operationId and status. The same shape under two operations is one schema (login and the magic link's verify).
 */
const INLINE_RESPONSE_NAMES: Record<string, Record<string, string>> = {
  login: { '200': 'LoginResponse' },
  verifyMagicLink: { '200': 'LoginResponse' },
  acceptInvitation: { '200': 'AcceptInvitationResponse' },
  getPreferences: { '200': 'PreferencesResponse' },
  updatePreferences: { '200': 'PreferencesResponse' },
  ingestTrace: { '403': 'IngestTraceForbiddenResponse' },
  exportOtlpTraces: {
    '200': 'OtlpExportTraceServiceResponse',
    '400': 'OtlpStatus',
    '413': 'OtlpStatus',
    '415': 'OtlpStatus',
  },
};

/** Adds a named schema, or checks that the one already there is the same. */
export function addSchema(document: OpenAPIObject, name: string, schema: Schema): void {
  const schemas = ((document.components ??= {}).schemas ??= {});
  const existing = schemas[name];
  if (existing && canonical(existing) !== canonical(schema)) {
    throw new Error(`Two different schemas would be named ${name}`);
  }
  schemas[name] = schema;
}

/** Every operation of the document with its method and path. */
export function operationsOf(
  document: OpenAPIObject,
): { method: string; path: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'put', 'post', 'delete', 'patch'].includes(method))
      .map(([method, operation]) => ({ method, path, operation: operation as Operation })),
  );
}

/**
 * Names the JSON bodies written inline (`INLINE_RESPONSE_NAMES`): each becomes a component referred to by `$ref`.
 * An envelope gets `required: [success, data]`, which the service always sends. Throws for an inline JSON body
 * without a name, so that every JSON response of the document stays a named schema.
 */
export function withNamedResponses(document: OpenAPIObject): OpenAPIObject {
  for (const { method, path, operation } of operationsOf(document)) {
    for (const [status, response] of Object.entries(operation.responses)) {
      for (const [mediaType, media] of Object.entries(response.content ?? {})) {
        if (!isJson(mediaType) || !media.schema || '$ref' in media.schema) continue;
        const name = INLINE_RESPONSE_NAMES[operation.operationId ?? '']?.[status];
        if (!name) {
          throw new Error(
            `${method.toUpperCase()} ${path} answers ${status} with an inline JSON schema: use ApiEnvelope or a ` +
              'DTO class, or name it in INLINE_RESPONSE_NAMES (apps/api/src/openapi-shapes.ts)',
          );
        }
        const schema = { ...media.schema };
        const properties = schema.properties as Schema | undefined;
        if (properties?.success && properties.data && !schema.required) schema.required = ['success', 'data'];
        addSchema(document, name, schema);
        media.schema = ref(name);
      }
    }
  }
  return document;
}

/** OTLP/JSON's AnyValue and KeyValue (opentelemetry-proto `common.proto`). */
const OTLP_SCHEMAS: Record<string, Schema> = {
  OtlpAnyValue: {
    type: 'object',
    description:
      'One of its members: stringValue, boolValue, intValue (a decimal string or a number), doubleValue, ' +
      'arrayValue, kvlistValue or bytesValue (base64).',
    properties: {
      stringValue: { type: 'string' },
      boolValue: { type: 'boolean' },
      intValue: { oneOf: [{ type: 'string', pattern: '^-?\\d+$' }, { type: 'integer' }] },
      doubleValue: { type: 'number' },
      arrayValue: {
        type: 'object',
        properties: { values: { type: 'array', items: ref('OtlpAnyValue') } },
      },
      kvlistValue: {
        type: 'object',
        properties: { values: { type: 'array', items: ref('OtlpKeyValue') } },
      },
      bytesValue: { type: 'string', contentEncoding: 'base64' },
    },
  },
  OtlpKeyValue: {
    type: 'object',
    required: ['key', 'value'],
    properties: { key: { type: 'string', example: 'gen_ai.operation.name' }, value: ref('OtlpAnyValue') },
  },
  OtlpSpan: {
    type: 'object',
    description:
      'A span (opentelemetry-proto `trace.proto`). Only generative-AI spans (gen_ai.operation.name, ' +
      'gen_ai.provider.name or gen_ai.system) become traces: the prompt and output come from gen_ai.input.messages ' +
      'and gen_ai.output.messages (or the deprecated gen_ai.prompt, gen_ai.completion and their events).',
    required: ['traceId', 'spanId', 'name', 'startTimeUnixNano', 'endTimeUnixNano'],
    properties: {
      traceId: { type: 'string', pattern: '^[0-9a-fA-F]{32}$' },
      spanId: { type: 'string', pattern: '^[0-9a-fA-F]{16}$' },
      parentSpanId: { type: 'string' },
      traceState: { type: 'string' },
      name: { type: 'string', example: 'chat gpt-4o' },
      kind: {
        description:
          'SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer (or its name).',
        oneOf: [{ type: 'integer', minimum: 0, maximum: 5 }, { type: 'string' }],
      },
      startTimeUnixNano: { oneOf: [{ type: 'string', pattern: '^\\d+$' }, { type: 'integer' }] },
      endTimeUnixNano: { oneOf: [{ type: 'string', pattern: '^\\d+$' }, { type: 'integer' }] },
      attributes: { type: 'array', items: ref('OtlpKeyValue') },
      events: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', example: 'gen_ai.user.message' },
            timeUnixNano: { oneOf: [{ type: 'string', pattern: '^\\d+$' }, { type: 'integer' }] },
            attributes: { type: 'array', items: ref('OtlpKeyValue') },
          },
        },
      },
      status: {
        type: 'object',
        properties: {
          code: {
            description: 'StatusCode: 0 unset, 1 ok, 2 error (or its name).',
            oneOf: [{ type: 'integer', minimum: 0, maximum: 2 }, { type: 'string' }],
          },
          message: { type: 'string' },
        },
      },
    },
  },
  OtlpExportTraceServiceRequest: {
    type: 'object',
    description:
      'OTLP/JSON ExportTraceServiceRequest (opentelemetry-proto `collector/trace/v1`); lowerCamelCase member names, ' +
      'or the proto’s snake_case ones. As application/x-protobuf, the same message in the protobuf encoding.',
    properties: {
      resourceSpans: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            resource: {
              type: 'object',
              properties: { attributes: { type: 'array', items: ref('OtlpKeyValue') } },
            },
            scopeSpans: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  scope: {
                    type: 'object',
                    properties: { name: { type: 'string' }, version: { type: 'string' } },
                  },
                  spans: { type: 'array', items: ref('OtlpSpan') },
                },
              },
            },
          },
        },
      },
    },
  },
};

/**
 * Shapes the code knows that routes outside the DTO folders describe as free objects: the OTLP request (the
 * OpenTelemetry protobuf's JSON form, and bytes as protobuf) and the limits of a schema version (the keys of
 * `SCHEMA_VERSIONS`' limits, read from the registry itself).
 */
export function withKnownShapes(document: OpenAPIObject): OpenAPIObject {
  for (const [name, schema] of Object.entries(OTLP_SCHEMAS)) addSchema(document, name, schema);
  for (const { operation } of operationsOf(document)) {
    if (operation.operationId !== 'exportOtlpTraces') continue;
    const content = operation.requestBody?.content ?? {};
    for (const [mediaType, media] of Object.entries(content)) {
      media.schema = isJson(mediaType)
        ? ref('OtlpExportTraceServiceRequest')
        : { type: 'string', format: 'binary' };
    }
  }
  const limits = document.components?.schemas?.VersionLimitsDto as
    { properties?: Record<string, Schema> } | undefined;
  const first = SCHEMA_VERSIONS[0]?.limits as unknown as Record<string, Record<string, number>> | undefined;
  if (limits?.properties && first) {
    for (const [part, schema] of Object.entries(limits.properties)) {
      const keys = Object.keys(first[part] ?? {});
      if (keys.length === 0) throw new Error(`No limits of ${part} in SCHEMA_VERSIONS`);
      limits.properties[part] = {
        ...schema,
        type: 'object',
        required: keys,
        properties: Object.fromEntries(keys.map((key) => [key, { type: 'integer', minimum: 0 }])),
      };
    }
  }
  return document;
}
