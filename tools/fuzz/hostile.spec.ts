import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectionOf, findPrefixed, idPoolName, poolValues } from './credentials.js';
import { credToken, type RequestContext } from './draft.js';
import { applicableMutators, batchArb, batchSeed, credentialKinds, schemeCredentials } from './hostile.js';
import { Raw, encodeJson, getAt, setAt } from './json-raw.js';
import { SchemaResolver, filterOperations, listOperations, type OpenApiDoc } from './openapi.js';
import { signature, summaryLine, type Failure } from './report.js';

const doc: OpenApiDoc = {
  paths: {
    '/api/v1/agents/{id}': {
      patch: {
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{24}$' } },
          {
            name: 'X-Svc-Version',
            in: 'header',
            schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
          },
          { name: 'page', in: 'query', schema: { type: 'number', minimum: 1 } },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  name: { type: 'string', maxLength: 20 },
                  metadata: { type: 'object', additionalProperties: true },
                },
              },
            },
          },
        },
        responses: {
          '200': {
            content: {
              'application/json': {
                schema: { type: 'object', properties: { success: { type: 'boolean' }, data: {} } },
              },
            },
          },
        },
        security: [{ jwt: [] }, { apiKey: [] }],
      },
    },
    '/api/v1/health': { get: { responses: {}, security: [] } },
  },
};
const ops = listOperations(doc);
const patch = ops.find((o) => o.method === 'PATCH')!;
const ctx = (kind: RequestContext['kind']): RequestContext => ({
  resolver: new SchemaResolver(doc),
  pools: new Set(['/api/v1/agents/{id}#id']),
  op: patch,
  kind,
  credentials: [
    { kind: 'jwt', header: 'Authorization', value: `Bearer ${credToken('jwt')}` },
    { kind: 'workspaceKey', header: 'X-API-Key', value: credToken('workspaceKey') },
  ],
  versions: ['2026-04-11'],
  wideKeys: 50_000,
});

describe('batches', () => {
  it('are a function of the seed', () => {
    const a = fc.sample(batchArb(ctx('jwt'), 30), { seed: 5, numRuns: 1 })[0]!;
    const b = fc.sample(batchArb(ctx('jwt'), 30), { seed: 5, numRuns: 1 })[0]!;
    expect(a.map((d) => [d.note, d.body?.toString('base64'), d.headers, d.query])).toEqual(
      b.map((d) => [d.note, d.body?.toString('base64'), d.headers, d.query]),
    );
    // The budget, plus the null sweep: one request per member of the body (name, metadata).
    expect(a).toHaveLength(32);
  });

  it('send null in each member of the body besides the budget, with credentials only on a secured route', () => {
    for (const size of [0, 5, 40]) {
      const batch = fc.sample(batchArb(ctx('jwt'), size), { seed: 2, numRuns: 1 })[0]!;
      const nulls = batch.filter((d) => d.mutator === 'body-null-member');
      expect(batch).toHaveLength(size + 2);
      expect(nulls.map((d) => JSON.parse(d.body!.toString()) as unknown)).toEqual([
        { name: null },
        { metadata: null },
      ]);
      expect(nulls[0]!.mustRefuse).toBe('a body that breaks the documented schema: name is null');
      expect(nulls[0]!.headers).toContainEqual(['Content-Type', 'application/json']);
    }
    const anonymous = fc.sample(batchArb(ctx('none'), 3), { seed: 2, numRuns: 1 })[0]!;
    expect(anonymous.some((d) => d.mutator === 'body-null-member')).toBe(false);
  });

  it('start with every applicable mutator once, then draw by weight', () => {
    const muts = applicableMutators(ctx('jwt')).map((m) => m.name);
    const batch = fc.sample(batchArb(ctx('jwt'), muts.length + 10), { seed: 9, numRuns: 1 })[0]!;
    expect(batch.slice(0, muts.length).map((d) => d.mutator)).toEqual(muts);
    expect(muts).toEqual(
      expect.arrayContaining([
        'valid',
        'body-one-mutation',
        'json-wide',
        'json-deep',
        'path-bad-id',
        'query-bad-value',
        'header-auth',
        'header-content-encoding',
        'header-oversized',
      ]),
    );
  });

  it('send the credential placeholder of their kind, real ids as pool placeholders', () => {
    const [valid] = fc.sample(batchArb(ctx('workspaceKey'), 1), { seed: 1, numRuns: 1 })[0]!;
    expect(valid!.headers).toContainEqual(['X-API-Key', '@@cred:workspaceKey@@']);
    expect(valid!.pathParams.id).toMatch(/^@@pool:\/api\/v1\/agents\/\{id\}#id:\d+@@$/);
    const [none] = fc.sample(batchArb(ctx('none'), 1), { seed: 1, numRuns: 1 })[0]!;
    expect(none!.headers.some(([h]) => /authorization|x-api-key/i.test(h))).toBe(false);
  });

  it('mark requests the API conventions say must be refused', () => {
    const batch = fc.sample(batchArb(ctx('jwt'), 400), { seed: 3, numRuns: 1 })[0]!;
    const refused = (pred: (note: string) => boolean) => batch.filter((d) => pred(d.note));
    expect(
      refused((n) => n === 'two Authorization headers').every((d) =>
        d.mustRefuse?.startsWith('ambiguous credentials'),
      ),
    ).toBe(true);
    expect(
      refused((n) => n === 'X-Svc-Version: ""').every((d) => d.mustRefuse?.includes('X-Svc-Version')),
    ).toBe(true);
    expect(
      refused((n) => n.startsWith('Content-Encoding: gzip with a plain body')).every((d) => d.mustRefuse),
    ).toBe(true);
    expect(
      refused((n) => n.startsWith('Content-Encoding: gzip with a gzip body')).every((d) => !d.mustRefuse),
    ).toBe(true);
    expect(
      batch
        .filter((d) => d.mutator === 'json-overflow-number')
        .every((d) => d.mustRefuse && d.note.includes('free-form member metadata')),
    ).toBe(true);
    const wide = batch.find((d) => d.mutator === 'json-wide')!;
    expect(Object.keys(JSON.parse(wide.body!.toString())).length).toBeGreaterThanOrEqual(50_000);
  });

  it('fuzz each accepted credential kind and none', () => {
    const kinds = { jwt: ['jwt'], apiKey: ['workspaceKey', 'agentKey'] } as const;
    const mutable = { jwt: [...kinds.jwt], apiKey: [...kinds.apiKey] };
    expect(credentialKinds(patch, mutable)).toEqual(['jwt', 'workspaceKey', 'agentKey', 'none']);
    expect(
      credentialKinds(
        ops.find((o) => o.method === 'GET')!,
        mutable,
      ),
    ).toEqual(['none']);
  });

  it('map each security scheme to the fuzzer’s credentials: SCIM bearer → the SCIM token', () => {
    const secured: OpenApiDoc = {
      paths: {
        '/scim/v2/Users': { get: { responses: {}, security: [{ scimToken: [] }] } },
        '/api/v1/agents': { get: { responses: {}, security: [{ jwt: [] }, { apiKey: [] }] } },
      },
      components: {
        securitySchemes: {
          jwt: { type: 'http', scheme: 'bearer' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          scimToken: { type: 'http', scheme: 'bearer', description: 'The SCIM token' },
        },
      },
    };
    const { kinds, headers } = schemeCredentials(secured);
    expect(kinds).toEqual({ jwt: ['jwt'], apiKey: ['workspaceKey', 'agentKey'], scimToken: ['scim'] });
    expect(headers).toContainEqual({ kind: 'scim', header: 'Authorization', value: 'Bearer @@cred:scim@@' });
    expect(headers).toContainEqual({ kind: 'jwt', header: 'Authorization', value: 'Bearer @@cred:jwt@@' });
    const [scimList, agents] = listOperations(secured);
    expect(credentialKinds(scimList!, kinds)).toEqual(['scim', 'none']);
    expect(credentialKinds(agents!, kinds)).toEqual(['jwt', 'workspaceKey', 'agentKey', 'none']);
    const [valid] = fc.sample(
      batchArb({ ...ctx('scim'), op: scimList!, credentials: headers, pools: new Set() }, 1),
      { seed: 1, numRuns: 1 },
    )[0]!;
    expect(valid!.headers).toContainEqual(['Authorization', 'Bearer @@cred:scim@@']);
  });

  it('derive distinct seeds per operation and kind', () => {
    expect(batchSeed(42, 'GET /a', 'jwt')).toBe(batchSeed(42, 'GET /a', 'jwt'));
    expect(batchSeed(42, 'GET /a', 'jwt')).not.toBe(batchSeed(42, 'GET /a', 'none'));
    expect(batchSeed(43, 'GET /a', 'jwt')).not.toBe(batchSeed(42, 'GET /a', 'jwt'));
  });
});

describe('operations', () => {
  it('are filtered by exact id or substring', () => {
    expect(filterOperations(ops, 'PATCH /api/v1/agents/{id}').map((o) => o.id)).toEqual([
      'PATCH /api/v1/agents/{id}',
    ]);
    expect(filterOperations(ops, 'health').map((o) => o.id)).toEqual(['GET /api/v1/health']);
    expect(filterOperations(ops, undefined)).toHaveLength(2);
  });
});

describe('JSON with raw bytes', () => {
  it('splices raw bytes where markers stand', () => {
    const bytes = encodeJson({ a: Raw.text('1e309'), b: [Raw.text('"\xff"')], c: 'x\ud800' });
    expect(bytes.toString('latin1')).toBe('{"a":1e309,"b":["\xff"],"c":"x\\ud800"}');
  });

  it('sets and reads values at paths without touching the original', () => {
    const root = { a: { b: [1, 2] } };
    const changed = setAt(root, ['a', 'b', 1], 'x');
    expect(getAt(changed, ['a', 'b', 1])).toBe('x');
    expect(root.a.b[1]).toBe(2);
    expect(setAt(root, ['a'], undefined)).toEqual({});
  });
});

describe('credential helpers', () => {
  it('find the full key beside its display prefix', () => {
    expect(findPrefixed({ keyPrefix: 'svc_agent_Ab', apiKey: 'svc_agent_AbCdEfGh' }, 'svc_agent_')).toBe(
      'svc_agent_AbCdEfGh',
    );
  });

  it('name pools after collections and their id members', () => {
    expect(idPoolName('agents')).toBe('agentId');
    expect(idPoolName('policies')).toBe('policyId');
    expect(collectionOf('/api/v1/agents/{id}/regenerate-key', 'id')).toBe('/api/v1/agents');
    const id = 'a'.repeat(24);
    const pools = poolValues('/api/v1/team/members', [
      { userId: id, name: 'x' },
      { id, agentId: 'not-an-id' },
    ]);
    expect(pools.get('userId')).toEqual([id]);
    expect(pools.get('memberId')).toEqual([id]);
    expect(pools.has('agentId')).toBe(false);
  });
});

describe('report', () => {
  const failure = (over: Partial<Failure>): Failure => ({
    op: 'GET /a',
    kind: 'jwt',
    index: 0,
    mutator: 'header-auth',
    note: '',
    oracle: 'accepted',
    message:
      'answered 200 to a request that must be refused: ambiguous credentials: two Authorization headers',
    status: 200,
    request: { method: 'GET', path: '/a', headers: [] },
    ...over,
  });

  it('groups one finding across operations and statuses', () => {
    expect(signature(failure({}))).toBe(
      signature(
        failure({
          op: 'POST /b',
          status: 201,
          message:
            'answered 201 to a request that must be refused: ambiguous credentials: two X-API-Key headers',
        }),
      ),
    );
    expect(signature(failure({ oracle: 'slow', message: 'answered 400 in 2900 ms' }))).toBe(
      signature(failure({ oracle: 'slow', message: 'answered 400 in 3100 ms', op: 'POST /c' })),
    );
    expect(signature(failure({ oracle: '5xx', message: 'status 500' }))).not.toBe(
      signature(failure({ oracle: '5xx', message: 'status 500', op: 'POST /c' })),
    );
  });

  it('never prints the line CI reserves', () => {
    const line = summaryLine(70, 10, 3500, 42, 'pglite');
    expect(line).toBe(
      'fuzz: 70 operations clean, 10 operations failing (3500 requests, seed 42, driver pglite)',
    );
    expect(line).not.toMatch(/\d+ passed, \d+ failed/);
  });
});
