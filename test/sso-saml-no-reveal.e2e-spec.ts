import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { IDP_KEYS, readRedirect, SamlIdp } from './support/saml-idp.js';

const API = '/api/v1';
const INITIATE = `${API}/auth/saml/initiate`;
const METADATA = `${API}/auth/saml/metadata`;
/** The least time a refusal of these routes takes (PUBLIC_REFUSAL_MS in the service), less timer slack. */
const REFUSAL_FLOOR_MS = 35;

/**
 * Issue 30, item 7: `GET /auth/saml/metadata/:orgId` and `POST /auth/saml/initiate` do not tell a stranger whether
 * an organization exists, or how it signs in, unless it signs in with SAML.
 */
describe('SAML initiate and metadata: one answer for every organization without SAML', () => {
  let ctx: TestContext;
  const idp = new SamlIdp();
  /** Every kind of organization id that does not sign in with SAML now, by what it is. */
  const ids: Record<string, string> = {};
  let samlOrg: string;

  const samlConfig = (domain: string) => ({
    provider: 'saml',
    emailDomains: [domain],
    saml: { entryPoint: idp.entryPoint, idpCertificate: IDP_KEYS.cert, idpIssuer: idp.entityId },
  });
  async function configure(owner: Registered, body: Record<string, unknown>) {
    await ctx.setPlan(owner.organization.id, 'governance');
    const put = await ctx.request('PUT', `${API}/sso/config`, { token: owner.token, body });
    expect(put.statusCode, put.body).toBe(200);
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    const saml = await ctx.register({ organizationName: 'Uses SAML' });
    await configure(saml, samlConfig('uses-saml.example'));
    samlOrg = saml.organization.id;

    const noSso = await ctx.register({ organizationName: 'No SSO' });
    ids.withoutSso = noSso.organization.id;
    const oidc = await ctx.register({ organizationName: 'Uses OIDC' });
    await configure(oidc, {
      provider: 'oidc',
      emailDomains: ['uses-oidc.example'],
      oidc: {
        issuer: 'https://login.oidc-test.example',
        clientId: 'governance',
        clientSecret: 's3cret-value',
      },
    });
    ids.oidc = oidc.organization.id;
    const downgraded = await ctx.register({ organizationName: 'SAML without the plan' });
    await configure(downgraded, samlConfig('downgraded.example'));
    await ctx.setPlan(downgraded.organization.id, 'sandbox');
    ids.samlWithoutPlan = downgraded.organization.id;
    const deleted = await ctx.register({ organizationName: 'Deleted SAML' });
    await configure(deleted, samlConfig('deleted.example'));
    const gone = await ctx.delete(`${API}/organizations/current`, {
      token: deleted.token,
      body: { confirmName: 'Deleted SAML' },
    });
    expect(gone.statusCode, gone.body).toBe(202);
    ids.deleted = deleted.organization.id;
    // An id of the right shape that names nothing: the SAML organization's with its last digit changed.
    ids.unknown = samlOrg.slice(0, -1) + (samlOrg.endsWith('0') ? '1' : '0');
  });
  afterAll(async () => ctx?.close());

  /** The refusal's envelope without its request id, and checks that it took at least the floor. */
  async function refusal(send: () => Promise<LightMyRequestResponse>) {
    const started = performance.now();
    const res = await send();
    const elapsed = performance.now() - started;
    const body = expectErrorEnvelope(res, 404, 'NOT_FOUND');
    expect(elapsed).toBeGreaterThanOrEqual(REFUSAL_FLOOR_MS);
    const { requestId: _requestId, ...rest } = body as Record<string, unknown>;
    return { rest, headers: res.headers['content-type'] };
  }

  /** Every answer is the same 404, body and headers alike, whatever kind of organization it was for. */
  function expectOneRefusal(answers: { kind: string; rest: unknown; headers: unknown }[]): void {
    for (const answer of answers) {
      expect({ rest: answer.rest, headers: answer.headers }, answer.kind).toEqual({
        rest: answers[0]!.rest,
        headers: answers[0]!.headers,
      });
    }
    expect(answers[0]!.rest).toEqual({
      success: false,
      code: 'NOT_FOUND',
      error: 'This organization does not sign in with SAML',
    });
  }

  it('answers initiate for an unknown, deleted, SSO-less, OIDC or downgraded organization with the same 404', async () => {
    const answers = [];
    for (const [kind, organizationId] of Object.entries(ids)) {
      const answer = await refusal(() => ctx.post(INITIATE, { body: { organizationId } }));
      answers.push({ kind, ...answer });
    }
    expect(answers).toHaveLength(5);
    expectOneRefusal(answers);
    // The organization with SAML is sent to its IdP, and quickly.
    const res = await ctx.post(INITIATE, { body: { organizationId: samlOrg } });
    expect(res.statusCode, res.body).toBe(200);
    expect(readRedirect(res.json().data.redirectUrl).url.origin).toBe(new URL(idp.entryPoint).origin);
  });

  it('answers the metadata of those organizations, and of a malformed id, with that same 404', async () => {
    const answers = [];
    for (const [kind, organizationId] of Object.entries({ ...ids, malformed: 'not-an-id' })) {
      answers.push({ kind, ...(await refusal(() => ctx.get(`${METADATA}/${organizationId}`))) });
    }
    expect(answers).toHaveLength(6);
    expectOneRefusal(answers);
    const metadata = await ctx.get(`${METADATA}/${samlOrg}`);
    expect(metadata.statusCode, metadata.body).toBe(200);
    expect(metadata.body).toContain(`entityID="${ctx.config.publicUrl}${METADATA}/${samlOrg}"`);
  });
});
