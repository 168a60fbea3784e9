import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { rawRequest } from './support/raw-http.js';
import {
  expectScimError,
  LIST_SCHEMA,
  SCIM,
  scimClient,
  scimOrganization,
  USER_SCHEMA,
} from './support/scim.js';
import { scimSuite } from './support/scim-suite.js';

/*
 * What a SCIM client meets before any resource: the public discovery documents (ServiceProviderConfig, ResourceTypes,
 * Schemas, by list and by id), and the SCIM error bodies of what the transport refuses before routing (repeated
 * credentials or parameters, malformed URLs, oversized heads and URLs).
 */

describe('SCIM 2.0', () => {
  const s = scimSuite({ freshWindows: true });

  describe('discovery (public)', () => {
    it('answers the ServiceProviderConfig, the resource types and the schemas, by list and by id', async () => {
      const { ctx } = s;
      const spc = await ctx.get(`${SCIM}/ServiceProviderConfig`);
      expect(spc.statusCode).toBe(200);
      expect(spc.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(spc.json()).toMatchObject({
        patch: { supported: true },
        bulk: { supported: false },
        filter: { supported: true, maxResults: 200 },
        sort: { supported: false },
        etag: { supported: false },
        authenticationSchemes: [expect.objectContaining({ type: 'oauthbearertoken' })],
      });
      const types = (await ctx.get(`${SCIM}/ResourceTypes`)).json();
      expect(types).toMatchObject({ schemas: [LIST_SCHEMA], totalResults: 2 });
      expect(types.Resources.map((r: { id: string }) => r.id)).toEqual(['User', 'Group']);
      expect((await ctx.get(`${SCIM}/ResourceTypes/User`)).json()).toMatchObject({
        endpoint: '/Users',
        schema: USER_SCHEMA,
      });
      expectScimError(await ctx.get(`${SCIM}/ResourceTypes/Device`), 404);
      const schemas = (await ctx.get(`${SCIM}/Schemas`)).json();
      expect(schemas.totalResults).toBe(2);
      const user = (await ctx.get(`${SCIM}/Schemas/${USER_SCHEMA}`)).json();
      const userName = user.attributes.find((a: { name: string }) => a.name === 'userName');
      expect(userName).toMatchObject({
        type: 'string',
        required: true,
        caseExact: false,
        uniqueness: 'server',
        mutability: 'readWrite',
      });
      expect(user.attributes.map((a: { name: string }) => a.name)).toEqual(
        expect.arrayContaining(['userName', 'name', 'displayName', 'active', 'emails', 'groups']),
      );
      expectScimError(await ctx.get(`${SCIM}/Schemas/urn:nothing`), 404);
    });
  });

  describe('transport', () => {
    it('answers SCIM errors for what is refused before routing: repeated credentials or parameters, bad URLs, huge heads', async () => {
      const { ctx } = s;
      const { token } = await scimOrganization(ctx, 'Transport');
      const twice = await ctx.app.inject({
        method: 'GET',
        url: `${SCIM}/Users`,
        headers: { authorization: [`Bearer ${token}`, `Bearer ${token}`] as unknown as string },
      });
      expectScimError(twice, 400, 'invalidSyntax');
      const c = scimClient(ctx, () => token);
      expectScimError(await c.get('/Users?filter=userName%20pr&filter=active%20pr'), 400, 'invalidValue');
      expectScimError(await c.get('/Users?count=1&count=2'), 400, 'invalidValue');
      expectScimError(await c.get('/Users/%zz'), 400, 'invalidSyntax');
      expectScimError(await c.get(`/Users/${'x'.repeat(5000)}`), 414);
      await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (ctx.app.getHttpServer().address() as AddressInfo).port;
      const big = await rawRequest(port, {
        method: 'GET',
        path: `${SCIM}/ResourceTypes`,
        headers: [['X-Padding', 'p'.repeat(17 * 1024)]],
      });
      expect(big.status).toBe(431);
      expect(big.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(JSON.parse(big.body)).toMatchObject({
        status: '431',
        schemas: [expect.stringContaining(':Error')],
      });
      const long = await rawRequest(port, { method: 'GET', path: `${SCIM}/Users?x=${'q'.repeat(20_000)}` });
      expect(long.status).toBe(414);
      expect(JSON.parse(long.body)).toMatchObject({ status: '414' });
      // The versioned API keeps its envelope.
      const api = await rawRequest(port, {
        method: 'GET',
        path: '/api/v1/health',
        headers: [['X-Padding', 'p'.repeat(17 * 1024)]],
      });
      expect(JSON.parse(api.body)).toMatchObject({ success: false, code: 'HEADERS_TOO_LARGE' });
    });
  });
});
