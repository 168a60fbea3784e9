import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { knownErrorCodes, moduleErrorCodes } from '../http/app-error.js';
import { errorCodeInBody, HttpMetrics, scimOperation } from './http-metrics.js';
import { Metrics } from './metrics.js';

describe('scimOperation', () => {
  it.each([
    ['/scim/v2/Users', 'POST', 'create'],
    ['/scim/v2/Users', 'GET', 'list'],
    ['/scim/v2/Users', 'HEAD', 'list'],
    ['/scim/v2/Users/:id', 'GET', 'get'],
    ['/scim/v2/Users/:id', 'PUT', 'replace'],
    ['/scim/v2/Users/:id', 'PATCH', 'patch'],
    ['/scim/v2/Users/:id', 'DELETE', 'delete'],
    ['/scim/v2/Groups', 'GET', 'groups'],
    ['/scim/v2/Groups/:id', 'PATCH', 'groups'],
    ['/scim/v2/ServiceProviderConfig', 'GET', 'discovery'],
    ['/scim/v2/ResourceTypes/:id', 'GET', 'discovery'],
    ['/scim/v2/Schemas', 'GET', 'discovery'],
  ])('names %s %s %s', (route, method, operation) => {
    expect(scimOperation(route, method)).toBe(operation);
  });

  it('names no operation outside SCIM, nor a method a Users route does not serve', () => {
    expect(scimOperation('/api/v1/sso/scim-token', 'POST')).toBeUndefined();
    expect(scimOperation('unmatched', 'GET')).toBeUndefined();
    expect(scimOperation('/scim/v2/Users', 'DELETE')).toBeUndefined();
  });
});

describe('the error code of a refusal read from its body', () => {
  const known = () => new Set(knownErrorCodes());

  it('is the envelope’s code when it is one of the service’s', () => {
    expect(errorCodeInBody('{"success":false,"error":"Not found","code":"NOT_FOUND"}', known())).toBe(
      'NOT_FOUND',
    );
  });

  it('is unknown when the body names a code the service does not have, or none', () => {
    expect(errorCodeInBody('{"error":"Refused","code":"CHOSEN_BY_A_CLIENT"}', known())).toBe('unknown');
    expect(errorCodeInBody('upstream failed', known())).toBe('unknown');
    expect(errorCodeInBody(Buffer.from('{"code":"NOT_FOUND"}'), known())).toBe('unknown');
  });

  it('labels the refusals counted from their bodies with the service’s codes only, modules’ codes included', async () => {
    const { TRACING_TEST_CODE } = moduleErrorCodes({ TRACING_TEST_CODE: 'TRACING_TEST_CODE' });
    const metrics = new Metrics();
    let onSend: ((request: unknown, reply: unknown, payload: unknown, done: () => void) => void) | undefined;
    new HttpMetrics(metrics).install({
      decorateRequest: () => undefined,
      addHook: (name: string, hook: typeof onSend) => {
        if (name === 'onSend') onSend = hook;
      },
    } as unknown as FastifyInstance);
    for (const code of ['NOT_FOUND', TRACING_TEST_CODE, 'CHOSEN_BY_A_CLIENT'])
      onSend!({}, { statusCode: 400 }, JSON.stringify({ error: 'Refused', code }), () => undefined);

    const { values } = await metrics.registry.getSingleMetric('governance_http_refusals_total')!.get();
    expect(Object.fromEntries(values.map((v) => [v.labels.code, v.value]))).toEqual({
      NOT_FOUND: 1,
      TRACING_TEST_CODE: 1,
      unknown: 1,
    });
  });
});
