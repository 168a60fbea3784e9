import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { samlAssertions, samlRequests } from '../libs/identity/src/sso/sso.schema.js';
import { JobScheduler } from '#platform';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { cookieValue as valueOf, setCookies } from './support/cookies.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import { readRedirect, RESPONSE_XPATH, sign } from './support/saml-idp.js';
import { ACS_PATH, API, configureSaml, samlSuite } from './support/saml-suite.js';

/**
 * SAML sign-in that succeeds: the SP metadata, the AuthnRequest from either start route, provisioning with the mapped
 * role and its audit, a response and an assertion id taken once, the TOTP step an organization may require after SSO,
 * and the purge of expired requests and assertion ids. What is refused: sso-saml-refusals; logout: sso-saml-logout.
 */
describe('SAML single sign-on', () => {
  const s = samlSuite({ organizationName: 'Acme SAML', domain: 'saml.example' });
  const { setup, code, mfaLogin } = mfaHelpers(() => s.ctx);

  it('publishes the SP metadata of an organization with SAML, without an encryption key when none is set', async () => {
    const { ctx, org, h } = s;
    const res = await ctx.get(`${API}/auth/saml/metadata/${org}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/samlmetadata\+xml/);
    expect(res.body).toContain(`entityID="${h.entityId(org)}"`);
    expect(res.body).toMatch(
      new RegExp(
        `AssertionConsumerService[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"[^>]*Location="${h.acs()}"|` +
          `AssertionConsumerService[^>]*Location="${h.acs()}"[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"`,
      ),
    );
    expect(res.body).toContain(h.logoutCallback());
    expect(res.body).toContain('urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress');
    expect(res.body).not.toContain('use="encryption"');

    const plain = await ctx.register({ organizationName: 'No SAML' });
    expectErrorEnvelope(
      await ctx.get(`${API}/auth/saml/metadata/${plain.organization.id}`),
      404,
      'NOT_FOUND',
    );
    expectErrorEnvelope(await ctx.get(`${API}/auth/saml/metadata/not-an-id`), 404, 'NOT_FOUND');
  });

  it('signs in and provisions from a signed assertion, with the mapped role, and audits it', async () => {
    const { ctx, org, idp, h } = s;
    const request = await h.start('alice@saml.example');
    expect(request.attr('Destination')).toBe(idp.entryPoint);
    expect(request.attr('AssertionConsumerServiceURL')).toBe(h.acs());
    expect(request.xml).toContain(`>${h.entityId(org)}</saml:Issuer>`);
    expect(request.url.searchParams.has('Signature')).toBe(false); // no SP signing key in this deployment

    const res = await h.post(
      h.response(org, request.id, {
        email: 'Alice@saml.example',
        groups: ['gov-admins'],
        name: 'Alice SAML',
      }),
    );
    expect(res.headers.location).not.toMatch(/token|eyJ/);
    const token = await h.collect(res);
    const me = await ctx.get(`${API}/auth/me`, { token });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json().data.user).toMatchObject({ email: 'alice@saml.example', name: 'Alice SAML' });
    expect(me.json().data.role).toBe('admin');
    const [provisioned] = await auditEntriesOf(ctx, org, 'sso.user.provisioned');
    expect(provisioned).toMatchObject({
      metadata: { provider: 'saml', role: 'admin', groups: ['gov-admins'] },
    });
    const logins = await auditEntriesOf(ctx, org, 'auth.login');
    expect(logins.at(-1)).toMatchObject({ metadata: { method: 'sso', provider: 'saml' } });

    // A signed response around an unsigned assertion is accepted too; no group: member.
    const second = await h.start('bea@saml.example');
    const assertion = h.assertion(org, second.id, { email: 'bea@saml.example' });
    const signedResponse = sign(
      idp.response({ inResponseTo: second.id, destination: h.acs(), inner: assertion }),
      RESPONSE_XPATH,
    );
    const bea = await h.collect(await h.post(signedResponse));
    expect((await ctx.get(`${API}/auth/me`, { token: bea })).json().data.role).toBe('member');
  });

  it('starts from POST /auth/saml/initiate for an organization with SAML, and 404 without', async () => {
    const { ctx, org, idp, h } = s;
    const res = await ctx.post(`${API}/auth/saml/initiate`, { body: { organizationId: org } });
    expect(res.statusCode, res.body).toBe(200);
    const request = readRedirect(res.json().data.redirectUrl);
    const cookie = valueOf(setCookies(res).get('svc_saml_binding'));
    expect(cookie).toBeTruthy();
    expect(request.url.origin + request.url.pathname).toBe(idp.entryPoint);
    const stored = await ctx.db.db.select().from(samlRequests).where(eq(samlRequests.id, request.id));
    expect(stored).toEqual([expect.objectContaining({ organizationId: org, kind: 'authn' })]);
    await h.collect(
      await h.post(
        h.response(org, request.id, { email: 'carl@saml.example' }),
        ACS_PATH,
        'SAMLResponse',
        cookie,
      ),
    );

    const plain = await ctx.register({ organizationName: 'Password only' });
    expectErrorEnvelope(
      await ctx.post(`${API}/auth/saml/initiate`, { body: { organizationId: plain.organization.id } }),
      404,
      'NOT_FOUND',
    );
    expectErrorEnvelope(
      await ctx.post(`${API}/auth/saml/initiate`, { body: { organizationId: 'x' } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('accepts a response once, and an assertion id once even under a fresh request', async () => {
    const { ctx, org, h } = s;
    const request = await h.start('dora@saml.example');
    const xml = h.response(org, request.id, { email: 'dora@saml.example', id: '_fixed-assertion-id-1' });
    await h.collect(await h.post(xml));
    h.failed(await h.post(xml)); // the same response again

    // The IdP (or a thief) presents the same assertion id for a new request: refused, the row is there.
    const next = await h.start('dora@saml.example');
    h.failed(
      await h.post(h.response(org, next.id, { email: 'dora@saml.example', id: '_fixed-assertion-id-1' })),
    );
    const seen = await ctx.db.db.select().from(samlAssertions).where(eq(samlAssertions.organizationId, org));
    expect(seen.map((r) => r.assertionId)).toContain('_fixed-assertion-id-1');
  });

  it('sends the browser through TOTP when the organization requires MFA after SSO, and keeps the SAML session', async () => {
    const { ctx, dns, owner, org, idp, h, signIn } = s;
    const token = await signIn('max@saml.example');
    const { secret } = await setup(token);
    expect((await ctx.post(`${AUTH}/mfa/enable`, { token, body: { code: code(secret) } })).statusCode).toBe(
      200,
    );
    ctx.clock.advance(30_000);
    await configureSaml(ctx, dns, owner, idp, 'saml.example', { requireMfaEvenWithSso: true });

    const request = await h.start('max@saml.example');
    const res = await h.post(
      h.response(org, request.id, { email: 'max@saml.example', sessionIndex: '_max' }),
    );
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`${ctx.config.appUrl}/login?ssoMfa=1`);
    expect(setCookies(res).has('svc_oauth_token')).toBe(false);
    const mfaCookie = valueOf(setCookies(res).get('svc_sso_mfa'))!;
    const exchanged = await ctx.get(`${API}/auth/sso/mfa-exchange`, {
      headers: { cookie: `svc_sso_mfa=${encodeURIComponent(mfaCookie)}` },
    });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    const login = await mfaLogin(exchanged.json().data.tempToken, code(secret));
    expect(login.statusCode, login.body).toBe(200);
    const logins = await auditEntriesOf(ctx, org, 'auth.login');
    expect(logins.at(-1)).toMatchObject({ metadata: { method: 'sso', provider: 'saml', mfa: true } });
    // The session opened after the code still names the IdP session for single logout.
    const out = await ctx.post(`${API}/auth/saml/logout/initiate`, { token: login.json().data.token });
    expect(readRedirect(out.json().data.redirectUrl).xml).toContain('_max');
    await configureSaml(ctx, dns, owner, idp, 'saml.example');
  });

  it('purges answered-or-not requests and remembered assertion ids once they expire', async () => {
    const { ctx, h } = s;
    await h.start('oz@saml.example');
    expect((await ctx.db.db.select().from(samlRequests)).length).toBeGreaterThan(0);
    ctx.clock.advance(2 * 86_400_000);
    await ctx.service(JobScheduler).runNow('saml-requests-purge');
    expect(await ctx.db.db.select().from(samlRequests)).toEqual([]);
    expect(await ctx.db.db.select().from(samlAssertions)).toEqual([]);
  });
});
