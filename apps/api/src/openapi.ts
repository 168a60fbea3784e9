import type { INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

import { type AppConfig, knownErrorCodes, MIGRATION_GUIDE_PATH, MIGRATION_GUIDES } from '#platform';
import { AppModule } from './app.module.js';
import { withEvents } from './openapi-events.js';
import { withRequestExamples } from './openapi-examples.js';
import { withScimSchemas } from './openapi-scim.js';
import { addSchema, withKnownShapes, withNamedResponses } from './openapi-shapes.js';
import { operationIdOf } from './operation-ids.js';

const DESCRIPTION = `
Records decisions made by AI agents (traces), evaluates them against policies, routes flagged ones to human review,
keeps a per-organization SHA-256 hash-chained audit log, and produces compliance artefacts.

**Envelope.** Success: \`{success: true, data}\`; paginated lists add \`pagination: {page, limit, total, totalPages}\`.
Errors: \`{success: false, error, code}\`, validation errors add \`details: [{field, message}]\`; \`code\` is one of the
schema \`ErrorCode\`. Every error response below lists the codes it can carry.

**Events** go to webhooks (signed per Standard Webhooks; see \`webhooks\`) and to the live stream (\`GET /events/stream\`,
\`/events/ws\`) as \`{type, timestamp, data}\`: the schema \`GovernanceEvent\`, one schema per \`type\`.

**Versioning.** URL axis: every route is served under \`/api/v1\`. The legacy unversioned mount \`/api/<resource>\` runs the
same handlers with \`Deprecation: true\`, \`Sunset: Mon, 12 Apr 2027 00:00:00 GMT\` and \`Link: <…${MIGRATION_GUIDE_PATH}>; rel="deprecation"\`,
and answers 410 \`GONE\` from 2027-04-12. Schema axis: request header \`X-Svc-Version: YYYY-MM-DD\` (registry at \`GET /versions\`);
no header means the latest version; an unknown or malformed value is 400 \`VERSION_UNSUPPORTED\`, a sunset version 410 \`VERSION_SUNSET\`.
Responses carry \`X-Svc-API-Version: v1\`, \`X-Svc-Version\` and \`X-Request-Id\`.

**Identifiers** are 24 lower-case hex characters. **Records of another organization** answer 404 \`NOT_FOUND\`.

**Errors of the transport**, on any route before it runs: 404 \`NOT_FOUND\` (no such route), 408 \`REQUEST_TIMEOUT\`
(the body did not arrive in time), 413 \`PAYLOAD_TOO_LARGE\`, 414 \`URI_TOO_LONG\`, 415 \`UNSUPPORTED_MEDIA_TYPE\` (a
\`Content-Type\` the route does not take, a charset other than UTF-8, or an unknown \`Content-Encoding\`), 431
\`HEADERS_TOO_LARGE\`, 500 \`INTERNAL_ERROR\` (the body carries only the request id) and 503 \`SERVICE_UNAVAILABLE\`
(saturated, or the database cannot serve the request now: too many connections, a deadlock, a timeout, a restart;
nothing was changed, and the same request may be sent again after \`Retry-After\`). A method a resource does not have is 405 \`METHOD_NOT_ALLOWED\` (SCIM's fixed groups).
`.trim();

export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Governance Service API')
    .setDescription(DESCRIPTION)
    .setVersion('v1')
    .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
    .addServer(serverUrl(config.publicUrl), 'This deployment')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'jwt')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, 'apiKey')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description: 'The organization’s SCIM token (scim_ and 48 hex characters)',
      },
      'scimToken',
    )
    .addGlobalParameters({
      name: 'X-Svc-Version',
      in: 'header',
      required: false,
      description: 'Schema version (YYYY-MM-DD) to apply; defaults to the latest.',
      schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', example: '2026-04-11' },
    });
  for (const [name, description] of [
    ['System', 'Health and the schema-version registry'],
    ['Auth', 'Registration, login and sessions'],
    ['Organizations', 'The caller’s organization'],
    ['Team', 'Members, roles and invitations'],
    ['Agents', 'AI agents and their svc_agent_ keys'],
    ['Policies', 'Conditions that approve, flag or block traces; templates'],
    ['Traces', 'Decisions of agents: ingestion, listing, similarity'],
    ['OTLP', 'OpenTelemetry (OTLP/HTTP) ingestion of generative-AI spans'],
    ['Audit', 'The hash-chained audit log'],
    ['Review queue', 'Flagged traces waiting for a human decision'],
    ['Approval patterns', 'Recurring review decisions that may become automatic approvals'],
    ['Webhooks', 'Signed event deliveries with retries'],
    ['Events', 'The live event stream (SSE and WebSocket)'],
    ['SCIM', 'SCIM 2.0 provisioning at /scim/v2 (RFC 7643/7644 shapes, application/scim+json)'],
  ] as const) {
    builder.addTag(name, description);
  }
  const document = SwaggerModule.createDocument(app, builder.build(), {
    include: applicationModules(app),
    operationIdFactory: operationIdOf,
  });
  document.paths['/api/v1/events/ws'] = { get: EVENTS_WS_OPERATION };
  withScimSchemas(document);
  withNamedResponses(document);
  withKnownShapes(document);
  withErrorCodes(document);
  withEvents(document);
  withRequestExamples(document);
  return withCommonResponses(document);
}

type NestModule = NonNullable<ReturnType<ModulesContainer['get']>>;

/**
 * The modules of the application, AppModule and what it imports (transitively), as the container resolved them:
 * the document describes them, not a test's probe modules mounted beside AppModule.
 */
function applicationModules(app: INestApplication): NestModule['metatype'][] {
  const root = [...app.get(ModulesContainer).values()].find((module) => module.metatype === AppModule);
  if (!root)
    throw new Error('The OpenAPI document describes AppModule, which this application does not mount');
  const found = new Set<NestModule>([root]);
  for (const module of found) for (const imported of module.imports) found.add(imported);
  return [...found].map((module) => module.metatype);
}

/**
 * The document's server: the deployment's public URL; without PUBLIC_URL (a local process, or the committed
 * openapi.json written by `openapi:write`), `/`, the host that serves the document, rather than a localhost URL
 * that means nothing to a reader.
 */
function serverUrl(publicUrl: string): string {
  const { hostname } = new URL(publicUrl);
  return ['localhost', '127.0.0.1', '[::1]'].includes(hostname) ? '/' : publicUrl;
}

/**
 * The error envelope's `code` as a closed enum: every code the service can answer (`knownErrorCodes`: the
 * platform's and those each module declares with `moduleErrorCodes`), as the schema `ErrorCode`, so that a client
 * gets them as a union.
 */
function withErrorCodes(document: OpenAPIObject): void {
  addSchema(document, 'ErrorCode', {
    type: 'string',
    enum: knownErrorCodes(),
    description: 'Stable machine-readable code of an error: the platform’s codes and every module’s.',
  });
  const envelope = document.components?.schemas?.ErrorEnvelopeDto as { properties?: Record<string, object> };
  if (!envelope?.properties?.code) throw new Error('ErrorEnvelopeDto has no code property');
  envelope.properties.code = { ...envelope.properties.code, $ref: '#/components/schemas/ErrorCode' };
  delete (envelope.properties.code as { type?: string }).type;
  const failure = document.components?.schemas?.BulkFailureDto as { properties?: Record<string, object> };
  if (failure?.properties?.code) {
    failure.properties.code = { ...failure.properties.code, $ref: '#/components/schemas/ErrorCode' };
    delete (failure.properties.code as { type?: string }).type;
  }
}

/**
 * The WebSocket route is served by @fastify/websocket, not by a controller, so it is described here: the upgrade,
 * its query, its messages and its close codes.
 */
const EVENTS_WS_OPERATION: OpenAPIObject['paths'][string]['get'] = {
  operationId: operationIdOf('EventStream', 'websocket'),
  tags: ['Events'],
  summary: 'Stream events (WebSocket)',
  description:
    'Upgrade to a WebSocket. `token` is a stream token from `POST /auth/stream-token` (single use, 60 s). The ' +
    'same events as `GET /events/stream`, as JSON text messages `{id, type, timestamp, data}` (the schema ' +
    '`GovernanceEvent`, discriminated by `type`); `lastEventId` ' +
    'replays the events after that id from the last 24 hours (at most 1,000) first. Ping frames every 15 s. Close ' +
    'codes: 4401 a bad, used or expired token (sent after the upgrade, since browsers cannot read a refused ' +
    'upgrade’s status), 1013 a client too slow to keep up (reconnect with `lastEventId`) or too many streams, 1001 ' +
    'the server is shutting down. A GET without an upgrade answers 426 `UPGRADE_REQUIRED`.',
  security: [],
  parameters: [
    { name: 'token', in: 'query', required: true, schema: { type: 'string', maxLength: 512 } },
    { name: 'lastEventId', in: 'query', required: false, schema: { type: 'string', maxLength: 64 } },
  ],
  responses: {
    '101': { description: 'Switching protocols: the WebSocket is open' },
    '426': {
      description: 'UPGRADE_REQUIRED (a plain GET)',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelopeDto' } } },
    },
  },
};

const ERROR_REF = { $ref: '#/components/schemas/ErrorEnvelopeDto' };

/**
 * What every route shares, added once here rather than on each handler: public routes declare an empty
 * security requirement, and every route can answer 400 VERSION_UNSUPPORTED (bad X-Svc-Version) and 410
 * (sunset schema version, or the legacy mount after its sunset).
 */
function withCommonResponses(document: OpenAPIObject): OpenAPIObject {
  document.components ??= {};
  document.components.headers = { ...document.components.headers, ...COMMON_HEADERS };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (!operation) continue;
      operation.security ??= [];
      // SCIM answers in its own shapes (RFC 7644 errors), outside the versioned API: no X-Svc-Version either.
      if (path.startsWith('/scim/v2')) {
        operation.parameters = operation.parameters?.filter(
          (p) => !('name' in p) || p.name !== 'X-Svc-Version',
        );
        continue;
      }
      const responses = operation.responses;
      responses['400'] ??= {
        description: 'VERSION_UNSUPPORTED (unknown or malformed X-Svc-Version)',
        content: { 'application/json': { schema: ERROR_REF } },
      };
      // The auth limiter counts every /auth route before anything else runs.
      if (path.startsWith('/api/v1/auth/')) {
        responses['429'] ??= {
          description:
            'RATE_LIMIT_EXCEEDED (100 requests per IP per 15 minutes over /auth; on MFA routes also 10 wrong codes per user in 15 minutes; see Retry-After)',
          headers: {
            'Retry-After': { description: 'Seconds until the window ends', schema: { type: 'integer' } },
          },
          content: { 'application/json': { schema: ERROR_REF } },
        };
      }
      responses['410'] ??= {
        description:
          'VERSION_SUNSET (pinned schema version past its sunset), GONE (legacy unversioned mount after 2027-04-12)',
        content: { 'application/json': { schema: ERROR_REF } },
      };
    }
  }
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (operation) withCommonHeaders(operation.responses, path);
    }
  }
  return document;
}

/** The headers every answer carries, described once and referenced from each response. */
const COMMON_HEADERS = {
  'X-Request-Id': {
    description: 'The request’s id (a well-formed incoming one is kept); quote it when reporting a problem.',
    schema: { type: 'string' },
  },
  'X-Svc-Version': {
    description: 'The schema version (YYYY-MM-DD) the answer follows: the pinned one, or the latest.',
    schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer', minimum: 0 },
  },
} as const;

type Responses = NonNullable<OpenAPIObject['paths'][string]['get']>['responses'];

const headerRef = (name: keyof typeof COMMON_HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** The error envelope is JSON whatever a route's success answer is (a PDF, an event stream, XML). */
const JSON_MEDIA = /^application\/([a-z.+-]+\+)?json$|^application\/x-protobuf$/;

/**
 * Adds the common headers to every response (`X-Svc-Version` under the versioned API, `Retry-After` on 429 and
 * 503), and declares an error answer under application/json where a route's success media type (`@ApiProduces`)
 * was copied onto it.
 */
function withCommonHeaders(responses: Responses, path: string): void {
  // Each response is replaced by a copy: the objects may be the decorators' metadata, shared by every build.
  for (const [status, response] of Object.entries(responses)) {
    if (!response || '$ref' in response) continue;
    const headers: Record<string, object> = {
      ...response.headers,
      'X-Request-Id': headerRef('X-Request-Id'),
    };
    if (path.startsWith('/api/v1')) headers['X-Svc-Version'] = headerRef('X-Svc-Version');
    if ((status === '429' || status === '503') && !response.headers?.['Retry-After'])
      headers['Retry-After'] = headerRef('Retry-After');
    let content = response.content;
    const media = Object.entries(content ?? {});
    const envelope = media.some(
      ([, m]) => m.schema && '$ref' in m.schema && m.schema.$ref === ERROR_REF.$ref,
    );
    if (Number(status) >= 400 && envelope && media.some(([type]) => !JSON_MEDIA.test(type)))
      content = { 'application/json': { schema: ERROR_REF } };
    responses[status] = { ...response, headers, ...(content ? { content } : {}) };
  }
}

/** Swagger UI at /docs, the document at /docs/openapi.json, and the migration guide page. */
export function setupDocs(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup('docs', app, document, {
    useGlobalPrefix: false,
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    customSiteTitle: 'Governance Service API',
  });
  const instance = (app as NestFastifyApplication).getHttpAdapter().getInstance();
  for (const guide of MIGRATION_GUIDES) {
    instance.get(guide.path, async (_request, reply) =>
      reply.type('text/html; charset=utf-8').header('Cache-Control', 'public, max-age=3600').send(guide.html),
    );
  }
}
