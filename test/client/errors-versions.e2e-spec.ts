import { readFileSync } from 'node:fs';
import { ERROR_CODES, type ErrorCode, GovernanceError, isGovernanceError } from '@governance/client';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { SCHEMA_VERSIONS } from '#platform';
import { definedErrorCodes } from '../support/error-codes.js';
import { ListeningService, signUp, type SignedUp } from './harness.js';

const root = new URL('../../', import.meta.url);

describe('client: typed errors and the version pin', () => {
  let service: ListeningService;
  let owner: SignedUp;

  beforeAll(async () => {
    service = await ListeningService.start();
    owner = await signUp(service, 'Erroneous');
  });
  afterAll(async () => service?.close());

  it('a record that does not exist is a GovernanceError with code NOT_FOUND, status 404 and the request id', async () => {
    const error = await owner.client
      .get('/api/v1/agents/{id}', { params: { path: { id: 'f'.repeat(24) } } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    if (!isGovernanceError(error, 'NOT_FOUND')) throw error;
    expectTypeOf(error.code).toEqualTypeOf<ErrorCode>();
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND', message: expect.any(String), details: [] });
    expect(error.requestId).toMatch(/\S/);
  });

  it('a refused body is VALIDATION_ERROR with details naming each field', async () => {
    const error = await owner.client
      .post('/api/v1/policies', {
        body: {
          name: 'Broken',
          outcome: 'flag',
          conditions: [{ field: 'nowhere', operator: 'equals', value: 1 }],
        },
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    const details = (error as GovernanceError).details;
    expect(details.length).toBeGreaterThan(0);
    expect(details[0]).toEqual({ field: expect.stringContaining('conditions'), message: expect.any(String) });
  });

  it('missing credentials are UNAUTHORIZED, and a read-only key’s write is FORBIDDEN', async () => {
    await expect(service.client().get('/api/v1/agents')).rejects.toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
    });
    const readOnly = await owner.client.post('/api/v1/auth/keys', {
      body: { name: 'ro', scope: { readOnly: true } },
    });
    const reader = service.client({ credentials: { apiKey: readOnly.key } });
    expect(Array.isArray(await reader.get('/api/v1/agents'))).toBe(true);
    await expect(
      reader.post('/api/v1/webhooks', {
        body: { url: 'https://hooks.example.com/x', events: ['webhook.test'] },
      }),
    ).rejects.toMatchObject({
      status: 403,
      code: 'FORBIDDEN',
    });
  });

  it('ERROR_CODES is the service’s union of error codes, no more, no less', async () => {
    expect(new Set(ERROR_CODES)).toEqual(await definedErrorCodes());
    type Schema = { enum?: string[]; $ref?: string; properties?: Record<string, Schema> };
    const document = JSON.parse(readFileSync(new URL('openapi.json', root), 'utf8')) as {
      components: { schemas: Record<string, Schema> };
    };
    const schemas = document.components.schemas;
    const code = schemas.ErrorEnvelopeDto!.properties!.code!;
    const named = code.$ref ? schemas[code.$ref.replace('#/components/schemas/', '')] : code;
    // The document closes the envelope's `code`: the client's ErrorCode is that enum, and lists the same codes.
    expect(new Set(named?.enum)).toEqual(new Set(ERROR_CODES));
  });

  it('pins the schema version with X-Svc-Version, and an unknown version is VERSION_UNSUPPORTED', async () => {
    const [current] = SCHEMA_VERSIONS;
    const pinned = service.client({ credentials: { jwt: owner.token }, version: current!.version });
    const { data, response } = await pinned.api.GET('/api/v1/versions');
    expect(response.headers.get('x-svc-version')).toBe(current!.version);
    expect(data?.data.map((v) => v.version)).toContain(current!.version);
    expect(await pinned.get('/api/v1/agents')).toEqual([]);

    const unknown = service.client({ credentials: { jwt: owner.token }, version: '1999-01-01' });
    const error = await unknown.get('/api/v1/agents').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'VERSION_UNSUPPORTED' });
    expect((error as GovernanceError).body).toMatchObject({ supportedVersions: [current!.version] });
  });
});
