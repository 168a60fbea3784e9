import { describe, expect, it } from 'vitest';
import { scimOperation } from './http-metrics.js';

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
