import { describe, expect, it } from 'vitest';
import type { WireResult } from './http-client.js';
import { SchemaResolver, listOperations, type OpenApiDoc } from './openapi.js';
import { errorEnvelopeProblem, judge, scimErrorProblem, shallowMatch } from './oracles.js';

const envelopeError = { $ref: '#/components/schemas/ErrorEnvelope' };
const doc: OpenApiDoc = {
  paths: {
    '/api/v1/things': {
      get: {
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['success', 'data', 'pagination'],
                  properties: {
                    success: { type: 'boolean', enum: [true] },
                    data: { type: 'array' },
                    pagination: { type: 'object' },
                  },
                },
              },
            },
          },
          '400': { content: { 'application/json': { schema: envelopeError } } },
        },
      },
    },
    '/api/v1/export': {
      get: {
        responses: {
          '200': { content: { 'application/x-ndjson': { schema: { type: 'string' } } } },
          '302': { description: 'a documented redirect, without content' },
        },
      },
    },
    '/api/v1/otel': {
      post: {
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: { type: 'object', properties: { partialSuccess: { type: 'object' } } },
              },
            },
          },
          '400': {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { code: { type: 'integer' }, message: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    },
  },
  components: {
    schemas: {
      ErrorEnvelope: {
        type: 'object',
        required: ['success', 'error', 'code'],
        properties: {
          success: { type: 'boolean', enum: [false] },
          error: { type: 'string' },
          code: { type: 'string' },
        },
      },
    },
  },
};
const resolver = new SchemaResolver(doc);
const [things, exportOp, otel] = listOperations(doc);
const opts = { maxMs: 1000, resolver };

function answer(status: number, body: unknown, headers: Record<string, string> = {}, ms = 5): WireResult {
  const bytes = Buffer.isBuffer(body)
    ? body
    : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return {
    response: {
      status,
      headers: { 'x-request-id': 'r-1', 'content-type': 'application/json; charset=utf-8', ...headers },
      body: bytes,
      ms,
    },
    ms,
  };
}
const get = (path: string, mustRefuse?: string) => ({ method: 'GET', path, mustRefuse });
const oracles = (v: { oracle: string }[]) => v.map((x) => x.oracle);

describe('oracles', () => {
  it('accept a documented envelope', () => {
    expect(
      judge(things!, get('/api/v1/things'), answer(200, { success: true, data: [], pagination: {} }), opts),
    ).toEqual([]);
    expect(
      judge(
        things!,
        get('/api/v1/things'),
        answer(401, { success: false, error: 'no', code: 'UNAUTHORIZED' }),
        opts,
      ),
    ).toEqual([]);
  });

  it('refuse a 2xx that is not the documented envelope', () => {
    expect(
      oracles(judge(things!, get('/api/v1/things'), answer(200, { success: true, data: [] }), opts)),
    ).toEqual(['envelope']);
    expect(oracles(judge(things!, get('/api/v1/things'), answer(200, [1, 2]), opts))).toEqual(['envelope']);
    expect(
      oracles(
        judge(things!, get('/api/v1/things'), answer(200, 'plain', { 'content-type': 'text/plain' }), opts),
      ),
    ).toEqual(['envelope']);
  });

  it('refuse Node’s bare 431: no envelope, no request id', () => {
    const bare: WireResult = {
      response: {
        status: 431,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(
          '{"error":"Request Header Fields Too Large","message":"Exceeded maximum allowed HTTP header size","statusCode":431}',
        ),
        ms: 1,
      },
      ms: 1,
    };
    expect(oracles(judge(things!, get('/api/v1/things'), bare, opts)).sort()).toEqual([
      'envelope',
      'request-id',
    ]);
  });

  it('allow an empty redirect where the document declares it, and nowhere else', () => {
    const redirect = answer(302, Buffer.alloc(0), {
      'content-type': '',
      location: 'https://app.example/login',
    });
    expect(judge(exportOp!, get('/api/v1/export'), redirect, opts)).toEqual([]);
    expect(oracles(judge(things!, get('/api/v1/things'), redirect, opts))).toEqual(['envelope']);
  });

  it('allow a non-JSON answer only where the document declares it', () => {
    expect(
      judge(
        exportOp!,
        get('/api/v1/export'),
        answer(200, '{"a":1}\n', { 'content-type': 'application/x-ndjson' }),
        opts,
      ),
    ).toEqual([]);
    expect(
      oracles(
        judge(exportOp!, get('/api/v1/export'), answer(400, 'bad', { 'content-type': 'text/html' }), opts),
      ),
    ).toEqual(['envelope']);
  });

  it('allow a documented non-envelope body (OTLP) but still the envelope for other errors', () => {
    const post = { method: 'POST', path: '/api/v1/otel' };
    expect(judge(otel!, post, answer(200, {}), opts)).toEqual([]);
    expect(judge(otel!, post, answer(400, { code: 3, message: 'bad' }), opts)).toEqual([]);
    expect(
      judge(otel!, post, answer(400, { success: false, error: 'v', code: 'VERSION_UNSUPPORTED' }), opts),
    ).toEqual([]);
    expect(oracles(judge(otel!, post, answer(401, { code: 16 }), opts))).toEqual(['envelope']);
  });

  it('flag 5xx, a missing X-Request-Id, slowness, socket errors and accepted requests that must be refused', () => {
    expect(
      oracles(
        judge(
          things!,
          get('/api/v1/things'),
          answer(500, { success: false, error: 'x', code: 'INTERNAL_ERROR' }),
          opts,
        ),
      ),
    ).toEqual(['5xx']);
    expect(
      oracles(
        judge(
          things!,
          get('/api/v1/things'),
          answer(200, { success: true, data: [], pagination: {} }, { 'x-request-id': '' }),
          opts,
        ),
      ),
    ).toEqual(['request-id']);
    expect(
      oracles(
        judge(
          things!,
          get('/api/v1/things'),
          answer(400, { success: false, error: 'x', code: 'V' }, {}, 2500),
          opts,
        ),
      ),
    ).toEqual(['slow']);
    expect(
      oracles(judge(things!, get('/api/v1/things'), { error: 'ECONNRESET: socket hang up', ms: 3 }, opts)),
    ).toEqual(['socket']);
    expect(
      oracles(
        judge(
          things!,
          get('/api/v1/things', 'two Authorization headers'),
          answer(200, { success: true, data: [], pagination: {} }),
          opts,
        ),
      ),
    ).toEqual(['accepted']);
    expect(
      judge(
        things!,
        get('/api/v1/things', 'two Authorization headers'),
        answer(400, { success: false, error: 'x', code: 'V' }),
        opts,
      ),
    ).toEqual([]);
  });

  it('check the error envelope’s members and the top level of documented schemas', () => {
    expect(errorEnvelopeProblem({ success: false, error: 'e', code: 'C' })).toBeUndefined();
    expect(errorEnvelopeProblem({ success: false, error: 'e' })).toMatch(/code/);
    expect(errorEnvelopeProblem({ error: 'e', code: 'C' })).toMatch(/success/);
    expect(shallowMatch(envelopeError, { success: true, error: 'e', code: 'C' }, resolver)).toMatch(
      /success/,
    );
    expect(shallowMatch({ anyOf: [{ type: 'array' }, envelopeError] }, [], resolver)).toBeUndefined();
  });

  it('judge /scim/v2 answers by RFC 7644, not by the envelope', () => {
    const scimError = { type: 'object', required: ['schemas', 'status'] };
    const scimDoc: OpenApiDoc = {
      paths: {
        '/scim/v2/Users': {
          get: {
            responses: {
              '200': {
                content: {
                  'application/scim+json': { schema: { type: 'object', additionalProperties: true } },
                  'application/json': { schema: { type: 'object', additionalProperties: true } },
                },
              },
              '400': { content: { 'application/scim+json': { schema: scimError } } },
            },
          },
        },
      },
    };
    const [users] = listOperations(scimDoc);
    const scimOpts = { maxMs: 1000, resolver: new SchemaResolver(scimDoc) };
    const scim = { 'content-type': 'application/scim+json; charset=utf-8' };
    const urn = 'urn:ietf:params:scim:api:messages:2.0:Error';
    const list = { schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 0 };
    expect(judge(users!, get('/scim/v2/Users?count=0'), answer(200, list, scim), scimOpts)).toEqual([]);
    const invalidFilter = { schemas: [urn], status: '400', scimType: 'invalidFilter', detail: 'bad' };
    expect(judge(users!, get('/scim/v2/Users?filter=x'), answer(400, invalidFilter, scim), scimOpts)).toEqual(
      [],
    );
    expect(
      judge(
        users!,
        get('/scim/v2/Users'),
        answer(401, { schemas: [urn], status: '401', detail: 'no' }, scim),
        scimOpts,
      ),
    ).toEqual([]);
    // The service's envelope, a wrong status member, an error as plain JSON: not SCIM errors.
    expect(
      oracles(
        judge(
          users!,
          get('/scim/v2/Users'),
          answer(401, { success: false, error: 'e', code: 'C' }, scim),
          scimOpts,
        ),
      ),
    ).toEqual(['envelope']);
    expect(
      oracles(
        judge(users!, get('/scim/v2/Users'), answer(400, { ...invalidFilter, status: 400 }, scim), scimOpts),
      ),
    ).toEqual(['envelope']);
    expect(oracles(judge(users!, get('/scim/v2/Users'), answer(400, invalidFilter), scimOpts))).toEqual([
      'envelope',
    ]);
    expect(scimErrorProblem({ schemas: [urn], status: '409', scimType: 'conflict' }, 409)).toMatch(
      /scimType/,
    );
    expect(scimErrorProblem({ schemas: [urn], status: '409', scimType: 'uniqueness' }, 409)).toBeUndefined();
  });
});
