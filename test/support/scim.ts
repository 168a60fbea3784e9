import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { Registered, TestContext } from './app.js';

export const SCIM = '/scim/v2';
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
/** The versioned API's route that shows, rotates and revokes an organization's SCIM token. */
export const SCIM_TOKEN_API = '/api/v1/sso/scim-token';

/** An organization on the Enterprise plan with a SCIM token, and a client that speaks SCIM JSON with it. */
export async function scimOrganization(ctx: TestContext, name = 'SCIM Org') {
  const owner: Registered = await ctx.register({ organizationName: name });
  await ctx.setPlan(owner.organization.id, 'enterprise');
  const created = await ctx.post('/api/v1/sso/scim-token', { token: owner.token });
  expect(created.statusCode, created.body).toBe(200);
  const token: string = created.json().data.token;
  return { owner, token, client: scimClient(ctx, () => token) };
}

export type ScimOrg = Awaited<ReturnType<typeof scimOrganization>>;

/** SCIM calls with a bearer token, bodies as `application/scim+json`. */
export function scimClient(ctx: TestContext, token: () => string | undefined) {
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    ctx.request(method as 'GET', `${SCIM}${path}`, {
      ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
      headers: {
        ...(token() ? { authorization: `Bearer ${token()}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
        ...headers,
      },
    });
  return {
    call,
    get: (path: string) => call('GET', path),
    post: (path: string, body: unknown) => call('POST', path, body),
    put: (path: string, body: unknown) => call('PUT', path, body),
    patch: (path: string, body: unknown) => call('PATCH', path, body),
    delete: (path: string) => call('DELETE', path),
  };
}

export type ScimClient = ReturnType<typeof scimClient>;

/** Provisions a user and answers its SCIM id. */
export async function provisionUser(
  client: ScimClient,
  userName: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await client.post('/Users', scimUser(userName, extra));
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

/** The userNames a filter returns (up to 200), sorted. */
export async function filteredUserNames(client: ScimClient, expression: string): Promise<string[]> {
  const res = await client.get(`/Users?count=200&filter=${encodeURIComponent(expression)}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().Resources as { userName: string }[]).map((r) => r.userName).sort();
}

/** A SCIM error body with this status and scimType (undefined: none). */
export function expectScimError(res: LightMyRequestResponse, status: number, scimType?: string): void {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
  const body = res.json();
  expect(body.schemas).toEqual([ERROR_SCHEMA]);
  expect(body.status).toBe(String(status));
  expect(typeof body.detail).toBe('string');
  if (scimType === undefined) expect(body).not.toHaveProperty('scimType');
  else expect(body.scimType).toBe(scimType);
}

export const patchOp = (...Operations: Record<string, unknown>[]) => ({
  schemas: [PATCH_SCHEMA],
  Operations,
});

export const scimUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER_SCHEMA],
  userName,
  active: true,
  ...extra,
});
