import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { LIST_SCHEMA, PATCH_SCHEMA, type ScimOrg, USER_SCHEMA } from './scim.js';

/*
 * The SCIM dialect suites (test/scim-entra-*.e2e-spec.ts, test/scim-okta.e2e-spec.ts, test/scim-idp-cycles.e2e-spec.ts)
 * play the requests Microsoft Entra ID and Okta send to a SCIM 2.0 service provider, as their public documentation
 * shows them: same shapes, casing ("Replace", "Add"), string booleans, extension attributes. Only ids and addresses are
 * ours (the service's userName is an e-mail address, its ids 24 hex digits, its groups the four role buckets).
 *
 * Sources, cited in the tests by their tag:
 *  [ENTRA-TUTORIAL] Microsoft Learn, "Tutorial: Develop and plan provisioning for a SCIM endpoint in Microsoft Entra
 *    ID", https://learn.microsoft.com/en-us/entra/identity/app-provisioning/use-scim-to-provision-users-and-groups
 *    (sections "SCIM protocol requests and responses" and "Build a SCIM endpoint", examples 1-6).
 *  [ENTRA-COMPAT] Microsoft Learn, "Known issues and resolutions with SCIM 2.0 protocol compliance of the Microsoft
 *    Entra user provisioning service", https://learn.microsoft.com/en-us/entra/identity/app-provisioning/
 *    application-provisioning-config-problem-scim-compatibility (section "Flags to alter the SCIM behavior").
 *  [ENTRA-MAPPINGS] Microsoft Learn, "Tutorial - Customize user provisioning attribute-mappings for SaaS
 *    applications in Microsoft Entra ID", https://learn.microsoft.com/en-us/entra/identity/app-provisioning/
 *    customize-application-attributes (section "Provisioning a role to a SCIM app", SingleAppRoleAssignment).
 *  [OKTA-SCIM20] Okta Developer, "SCIM 2.0 Protocol Reference" (Okta and SCIM Version 2.0),
 *    https://developer.okta.com/docs/api/openapi/okta-scim/guides/scim-20
 *    (formerly https://developer.okta.com/docs/reference/scim/scim-20/).
 */

export const USER = USER_SCHEMA;
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = PATCH_SCHEMA;
export const LIST = LIST_SCHEMA;
export const SCIM_BASE = 'http://gov.test/scim/v2';

export type Org = ScimOrg;
export type Client = Org['client'];

export const q = (filter: string) => `?filter=${encodeURIComponent(filter)}`;

/** A SCIM success: the status and the SCIM media type. */
export function expectScim(res: LightMyRequestResponse, status: number): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
  return res.json();
}

/** An RFC 7644 ListResponse with integers (Okta requires them) and these resources. */
export function expectList(res: LightMyRequestResponse, total: number): Record<string, unknown>[] {
  const body = expectScim(res, 200);
  expect(body.schemas).toEqual([LIST]);
  expect(body.totalResults).toBe(total);
  expect(Number.isInteger(body.itemsPerPage)).toBe(true);
  expect(Number.isInteger(body.startIndex)).toBe(true);
  const resources = body.Resources as Record<string, unknown>[];
  expect(Array.isArray(resources)).toBe(true);
  expect(body.itemsPerPage).toBe(resources.length);
  return resources;
}
