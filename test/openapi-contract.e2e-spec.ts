import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_IDS } from '../apps/api/src/operation-ids.js';
import { TestContext } from './support/app.js';
import { workspaceKey } from './support/cpi-suite.js';
import { definedErrorCodes } from './support/error-codes.js';
import { ingestFlagged, refundFlagPolicy } from './support/review-suite.js';
import { validatorsOf } from './support/openapi-schemas.js';
import { listRoutes } from './support/routes.js';
import { SCIM, scimUser } from './support/scim.js';

interface Media {
  schema?: { $ref?: string };
  example?: unknown;
}
interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>> };
}

const isJson = (mediaType: string) => /^application\/([a-z.+-]+\+)?json$/.test(mediaType);

describe('the OpenAPI document as a client generator reads it', () => {
  let ctx: TestContext;
  let doc: Document;
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        where: `${method.toUpperCase()} ${path}`,
        operation,
      })),
    );

  beforeAll(async () => {
    ctx = await TestContext.create();
    doc = (await ctx.get('/docs/openapi.json')).json();
  });
  afterAll(async () => ctx?.close());

  it('enumerates in ErrorCode exactly the error codes the platform and the modules define', async () => {
    expect(doc.components.schemas.ErrorCode).toMatchObject({ type: 'string' });
    expect([...(doc.components.schemas.ErrorCode!.enum as string[])].sort()).toEqual(
      [...(await definedErrorCodes())].sort(),
    );
    const envelope = doc.components.schemas.ErrorEnvelopeDto as { properties: Record<string, unknown> };
    expect(envelope.properties.code).toMatchObject({ $ref: '#/components/schemas/ErrorCode' });
  });

  it('names every operation from the table, once, and every route has one', () => {
    const ids = [
      ...operations().map(({ operation }) => operation.operationId),
      ...Object.values(doc.webhooks).flatMap((item) => Object.values(item).map((o) => o.operationId)),
    ];
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    const named = new Set(Object.values(OPERATION_IDS));
    expect(operations().filter(({ operation }) => !named.has(operation.operationId))).toEqual([]);
    // Every controller route is in the document (the WebSocket is a route of @fastify/websocket, not of Nest).
    expect(operations()).toHaveLength(listRoutes(ctx.app).length + 1);
  });

  it('answers every JSON body with a named schema', () => {
    const inline: string[] = [];
    for (const { where, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          if (isJson(mediaType) && !media.schema?.$ref) inline.push(`${where} ${status} ${mediaType}`);
        }
      }
    }
    expect(inline).toEqual([]);
  });

  it('names each envelope after its model, one schema per model and kind', () => {
    const schemas = doc.components.schemas;
    expect(schemas.AgentResponse).toMatchObject({
      required: ['success', 'data'],
      properties: { data: { $ref: '#/components/schemas/AgentDto' } },
    });
    expect(schemas.AgentPage).toMatchObject({
      required: ['success', 'data', 'pagination'],
      properties: { data: { type: 'array', items: { $ref: '#/components/schemas/AgentDto' } } },
    });
    expect(schemas.LoginResponse).toMatchObject({ required: ['success', 'data'] });
    const login = doc.paths['/api/v1/auth/login']!.post!.responses['200']!.content!['application/json']!;
    const magic =
      doc.paths['/api/v1/auth/magic-link/verify']!.post!.responses['200']!.content!['application/json']!;
    expect(login.schema).toEqual({ $ref: '#/components/schemas/LoginResponse' });
    expect(magic.schema).toEqual(login.schema);
  });

  it('answers SCIM in its RFC 7643/7644 schemas, on both media types', () => {
    const users = doc.paths['/scim/v2/Users']!;
    for (const mediaType of ['application/scim+json', 'application/json']) {
      expect(users.get!.responses['200']!.content![mediaType]!.schema).toEqual({
        $ref: '#/components/schemas/ScimUserListResponse',
      });
      expect(users.post!.requestBody!.content[mediaType]!.schema).toEqual({
        $ref: '#/components/schemas/ScimUserRequest',
      });
      expect(users.post!.responses['409']!.content![mediaType]!.schema).toEqual({
        $ref: '#/components/schemas/ScimError',
      });
    }
  });

  it('gives every request body an example', () => {
    const bodies = operations().filter(({ operation }) => operation.requestBody);
    expect(bodies.length).toBeGreaterThanOrEqual(64);
    expect(
      bodies
        .filter(
          ({ operation }) =>
            !Object.values(operation.requestBody!.content).some((m) => m.example !== undefined),
        )
        .map(({ where }) => where),
    ).toEqual([]);
  });

  it('describes what the routes whose shapes it names answer: SCIM, a corrected trace, the settings', async () => {
    const owner = await ctx.register({ organizationName: 'Shapes' });
    await ctx.setPlan(owner.organization.id, 'custom');
    const token = owner.token;
    const scimToken = (await ctx.post('/api/v1/sso/scim-token', { token })).json().data.token as string;
    const scim = (method: string, path: string, body?: unknown) =>
      ctx.request(method, `${SCIM}${path}`, {
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        headers: { authorization: `Bearer ${scimToken}`, 'content-type': 'application/scim+json' },
      });
    const created = await scim('POST', '/Users', scimUser('shaped@example.com', { externalId: 'ext-1' }));
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const agent = await ctx.newAgent(owner.organization.id, 'Shaped');
    await refundFlagPolicy(ctx, owner.organization.id, []);
    const { traceId } = await ingestFlagged(ctx, agent);
    const key = await workspaceKey(ctx, owner);
    const corrected = await ctx.post('/api/v1/cpi/ingest', {
      apiKey: key.key,
      body: {
        traceId,
        correctedDecision: { decision: 'escalate', confidence: 0.7 },
        feedbackNotes: 'Too much.',
      },
    });
    expect(corrected.statusCode, corrected.body).toBe(200);
    const checks: [string, Promise<{ body: string }>][] = [
      ['ScimServiceProviderConfig', scim('GET', '/ServiceProviderConfig')],
      ['ScimResourceTypeListResponse', scim('GET', '/ResourceTypes')],
      ['ScimResourceType', scim('GET', '/ResourceTypes/User')],
      ['ScimSchemaListResponse', scim('GET', '/Schemas')],
      ['ScimSchema', scim('GET', '/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group')],
      ['ScimUser', Promise.resolve(created)],
      [
        'ScimUser',
        scim('PATCH', `/Users/${id}`, { Operations: [{ op: 'replace', path: 'active', value: false }] }),
      ],
      ['ScimUserListResponse', scim('GET', '/Users?filter=userName%20eq%20%22shaped%40example.com%22')],
      ['ScimGroupListResponse', scim('GET', '/Groups')],
      ['ScimGroup', scim('GET', '/Groups/owner')],
      ['ScimError', scim('GET', '/Users?filter=userName%20zz')],
      ['TraceResponse', ctx.get(`/api/v1/traces/${traceId}`, { token })],
      ['SecuritySettingsResponse', ctx.get('/api/v1/auth/security-settings', { token })],
      ['SchemaVersionListResponse', ctx.get('/api/v1/versions')],
    ];
    const problems: string[] = [];
    const schemas = validatorsOf(doc);
    for (const [name, answer] of checks) {
      const validate = schemas.of(name);
      if (!validate(JSON.parse((await answer).body)))
        problems.push(`${name}: ${schemas.ajv.errorsText(validate.errors)}`);
    }
    expect(problems).toEqual([]);
  });
});
