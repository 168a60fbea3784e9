import { createVerify } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../libs/identity/src/users/user.schema.js';
import { samlAssertions, samlRequests } from '../libs/identity/src/sso/sso.schema.js';
import { JobScheduler } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/compliance-suite.js';
import { cookieValue as valueOf, setCookies } from './support/cookies.js';
import { AUTH, mfaHelpers } from './support/mfa-suite.js';
import {
  ASSERTION_XPATH,
  type AssertionOptions,
  IDP_KEYS,
  OTHER_KEYS,
  readRedirect,
  RESPONSE_XPATH,
  SamlIdp,
  samlForm,
  sign,
  SP_KEYS,
} from './support/saml-idp.js';
import { verifySsoDomains } from './support/sso-domains.js';
import { TestDns } from './support/test-dns.js';

const API = '/api/v1';
const INITIATE = `${API}/auth/sso/initiate`;
const ACS_PATH = `${API}/auth/saml/callback`;
const LOGOUT_CALLBACK = `${API}/auth/saml/logout/callback`;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The service provider of one organization as the IdP sees it, and the helpers to play its browser. */
function samlHarness(context: () => TestContext, idp: SamlIdp) {
  const publicUrl = () => context().config.publicUrl;
  const acs = () => `${publicUrl()}${ACS_PATH}`;
  const logoutCallback = () => `${publicUrl()}${LOGOUT_CALLBACK}`;
  const entityId = (organizationId: string) => `${publicUrl()}${API}/auth/saml/metadata/${organizationId}`;

  /** The browser's binding cookie of the last sign-in started (the IdP posts back to the same browser). */
  let binding: string | undefined;

  /** The dispatcher's AuthnRequest for `email`, read back from its redirect URL; keeps the binding cookie. */
  async function start(email: string) {
    const res = await context().post(INITIATE, { body: { email } });
    expect(res.statusCode, res.body).toBe(200);
    const redirectUrl: string = res.json().data.redirectUrl;
    expect(redirectUrl.startsWith(`${idp.entryPoint}?`), redirectUrl).toBe(true);
    const cookie = setCookies(res).get('svc_saml_binding')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure; SameSite=None/);
    expect(cookie).toMatch(/Path=\/api\/v1\/auth\/saml/);
    binding = valueOf(cookie);
    return { ...readRedirect(redirectUrl), binding };
  }

  /** A response the IdP signs the usual way: the assertion signed, for this organization's SP. */
  function response(
    organizationId: string,
    requestId: string,
    over: Partial<AssertionOptions> & { email: string },
  ): string {
    const assertion = idp.assertion({
      inResponseTo: requestId,
      audience: entityId(organizationId),
      recipient: acs(),
      ...over,
    });
    return idp.response({
      inResponseTo: requestId,
      destination: acs(),
      inner: sign(assertion, ASSERTION_XPATH),
    });
  }

  /** Posts a SAML message as the browser would: a form, with the binding cookie of the last sign-in started. */
  const post = (xml: string, path = ACS_PATH, field = 'SAMLResponse', cookie = binding) =>
    context().request('POST', path, {
      payload: samlForm({ [field]: xml }),
      headers: { ...FORM, ...(cookie ? { cookie: `svc_saml_binding=${encodeURIComponent(cookie)}` } : {}) },
    });

  /** The session a successful callback left in its cookie, collected as the dashboard does. */
  async function collect(res: LightMyRequestResponse): Promise<string> {
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(`${context().config.appUrl}/auth/callback`);
    const cookie = setCookies(res).get('svc_oauth_token')!;
    expect(cookie).toMatch(/HttpOnly/);
    const taken = await context().get(`${API}/auth/oauth-token`, {
      headers: { cookie: `svc_oauth_token=${encodeURIComponent(valueOf(cookie)!)}` },
    });
    expect(taken.statusCode, taken.body).toBe(200);
    return taken.json().data.token;
  }

  const failed = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(`${context().config.appUrl}/login?error=sso_failed`);
    expect(setCookies(res).has('svc_oauth_token')).toBe(false);
  };

  return { acs, logoutCallback, entityId, start, response, post, collect, failed };
}

/** Configures SAML for the owner's organization and proves its domain on `dns`, so that the domain routes. */
async function configureSaml(
  ctx: TestContext,
  dns: TestDns,
  owner: Registered,
  idp: SamlIdp,
  domain: string,
  extra = {},
) {
  await ctx.setPlan(owner.organization.id, 'governance');
  const put = await ctx.request('PUT', `${API}/sso/config`, {
    token: owner.token,
    body: {
      provider: 'saml',
      emailDomains: [domain],
      roleMappingRules: [{ pattern: '^gov-admins$', role: 'admin' }],
      saml: {
        entryPoint: idp.entryPoint,
        idpCertificate: IDP_KEYS.cert,
        idpIssuer: idp.entityId,
        logoutUrl: idp.logoutUrl,
      },
      ...extra,
    },
  });
  expect(put.statusCode, put.body).toBe(200);
  await verifySsoDomains(ctx, owner.token, dns);
}

describe('SAML single sign-on and single logout', () => {
  let ctx: TestContext;
  let dns: TestDns;
  let owner: Registered;
  let org: string;
  const idp = new SamlIdp();
  const h = samlHarness(() => ctx, idp);
  const { setup, code, mfaLogin } = mfaHelpers(() => ctx);

  /** A whole sign-in of `email` with the given assertion fields: the session token. */
  async function signIn(email: string, over: Partial<AssertionOptions> = {}) {
    const request = await h.start(email);
    return h.collect(await h.post(h.response(org, request.id, { email, ...over })));
  }
  const userExists = async (email: string) =>
    (await ctx.db.db.select().from(users).where(eq(users.email, email))).length > 0;

  beforeAll(async () => {
    dns = await TestDns.start();
    ctx = await TestContext.create({ config: { ssoDnsServers: [dns.address] } });
    owner = await ctx.register({ organizationName: 'Acme SAML' });
    org = owner.organization.id;
    await configureSaml(ctx, dns, owner, idp, 'saml.example');
  });
  afterAll(async () => {
    await ctx?.close();
    await dns?.stop();
  });

  it('publishes the SP metadata of an organization with SAML, without an encryption key when none is set', async () => {
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
    const assertion = idp.assertion({
      email: 'bea@saml.example',
      inResponseTo: second.id,
      audience: h.entityId(org),
      recipient: h.acs(),
    });
    const signedResponse = sign(
      idp.response({ inResponseTo: second.id, destination: h.acs(), inner: assertion }),
      RESPONSE_XPATH,
    );
    const bea = await h.collect(await h.post(signedResponse));
    expect((await ctx.get(`${API}/auth/me`, { token: bea })).json().data.role).toBe('member');
  });

  it('starts from POST /auth/saml/initiate for an organization with SAML, and 404 without', async () => {
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

  it('refuses unsigned messages, another key, and a tampered assertion', async () => {
    const email = 'eve@saml.example';
    const fields = (id: string) => ({
      email,
      inResponseTo: id,
      audience: h.entityId(org),
      recipient: h.acs(),
    });

    let request = await h.start(email);
    h.failed(
      await h.post(
        idp.response({
          inResponseTo: request.id,
          destination: h.acs(),
          inner: idp.assertion(fields(request.id)),
        }),
      ),
    );
    request = await h.start(email);
    h.failed(
      await h.post(
        idp.response({
          inResponseTo: request.id,
          destination: h.acs(),
          inner: sign(idp.assertion(fields(request.id)), ASSERTION_XPATH, OTHER_KEYS),
        }),
      ),
    );
    request = await h.start(email);
    const forgedResponse = sign(
      idp.response({
        inResponseTo: request.id,
        destination: h.acs(),
        inner: idp.assertion(fields(request.id)),
      }),
      RESPONSE_XPATH,
      OTHER_KEYS,
    );
    h.failed(await h.post(forgedResponse));
    // Signed for eve, then edited to say someone else.
    request = await h.start(email);
    const tampered = h.response(org, request.id, { email }).replace(email, 'mallory@saml.example');
    h.failed(await h.post(tampered));
    expect(await userExists(email)).toBe(false);
    expect(await userExists('mallory@saml.example')).toBe(false);
  });

  it('refuses XML signature wrapping', async () => {
    const victim = 'vic@saml.example';
    const attacker = 'mallory@saml.example';

    // 1. The genuine signed assertion hidden in Extensions; an unsigned evil assertion in its place, carrying a
    //    copy of the genuine signature.
    let request = await h.start(victim);
    const genuine = sign(
      idp.assertion({
        email: victim,
        inResponseTo: request.id,
        audience: h.entityId(org),
        recipient: h.acs(),
      }),
      ASSERTION_XPATH,
    );
    const signature = /<(\w+:)?Signature[\s\S]*<\/(\w+:)?Signature>/.exec(genuine)![0];
    const evil = idp
      .assertion({ email: attacker, inResponseTo: request.id, audience: h.entityId(org), recipient: h.acs() })
      .replace(/(<saml:Issuer>[^<]*<\/saml:Issuer>)/, `$1${signature}`);
    const hidden = idp
      .response({ inResponseTo: request.id, destination: h.acs(), inner: evil })
      .replace('<samlp:Status>', `<samlp:Extensions>${genuine}</samlp:Extensions><samlp:Status>`);
    h.failed(await h.post(hidden));

    // 2. A signed response wrapped: an evil response at the root, the genuine signed one inside its Signature.
    request = await h.start(victim);
    const signedResponse = sign(
      idp.response({
        inResponseTo: request.id,
        destination: h.acs(),
        inner: idp.assertion({
          email: victim,
          inResponseTo: request.id,
          audience: h.entityId(org),
          recipient: h.acs(),
        }),
      }),
      RESPONSE_XPATH,
    );
    const responseSignature = /<(\w+:)?Signature[\s\S]*<\/(\w+:)?Signature>/.exec(signedResponse)![0];
    const wrapped = idp
      .response({
        inResponseTo: request.id,
        destination: h.acs(),
        id: '_evil-response',
        inner: idp.assertion({
          email: attacker,
          inResponseTo: request.id,
          audience: h.entityId(org),
          recipient: h.acs(),
        }),
      })
      .replace(
        '<samlp:Status>',
        responseSignature.replace(
          /<\/(\w+:)?Signature>$/,
          `<ds:Object xmlns:ds="http://www.w3.org/2000/09/xmldsig#">${signedResponse}</ds:Object></$1Signature>`,
        ) + '<samlp:Status>',
      );
    h.failed(await h.post(wrapped));

    // 3. Two assertions side by side: the genuine signed one and an evil one.
    request = await h.start(victim);
    const both = idp.response({
      inResponseTo: request.id,
      destination: h.acs(),
      inner:
        idp.assertion({
          email: attacker,
          inResponseTo: request.id,
          audience: h.entityId(org),
          recipient: h.acs(),
        }) +
        sign(
          idp.assertion({
            email: victim,
            inResponseTo: request.id,
            audience: h.entityId(org),
            recipient: h.acs(),
          }),
          ASSERTION_XPATH,
        ),
    });
    h.failed(await h.post(both));
    expect(await userExists(attacker)).toBe(false);
  });

  it('refuses a wrong audience, recipient or destination, an expired assertion, and an unknown or foreign InResponseTo', async () => {
    const email = 'fay@saml.example';
    let request = await h.start(email);
    h.failed(
      await h.post(h.response(org, request.id, { email, audience: 'https://another-sp.example/metadata' })),
    );
    request = await h.start(email);
    h.failed(
      await h.post(h.response(org, request.id, { email, recipient: 'https://another-sp.example/acs' })),
    );
    request = await h.start(email);
    const misdirected = sign(
      idp.assertion({ email, inResponseTo: request.id, audience: h.entityId(org), recipient: h.acs() }),
      ASSERTION_XPATH,
    );
    h.failed(
      await h.post(
        idp.response({
          inResponseTo: request.id,
          destination: 'https://another-sp.example/acs',
          inner: misdirected,
        }),
      ),
    );
    request = await h.start(email);
    h.failed(await h.post(h.response(org, request.id, { email, validForMs: -2 * 60_000 })));

    // InResponseTo this service never issued, or none at all (unsolicited).
    h.failed(await h.post(h.response(org, '_never-issued', { email })));
    h.failed(await h.post(h.response(org, '_x', { email }).replace(/ InResponseTo="_x"/, '')));

    // A request of another organization (same IdP, same key) answered with an assertion for this one.
    const other = await ctx.register({ organizationName: 'Other SAML' });
    await configureSaml(ctx, dns, other, idp, 'other-saml.example');
    const foreign = await h.start('gus@other-saml.example');
    h.failed(await h.post(h.response(org, foreign.id, { email })));
    h.failed(await h.post(h.response(org, foreign.id, { email: 'gus@other-saml.example' })));

    // An expired request: the clock moves past its 10 minutes.
    request = await h.start(email);
    ctx.clock.advance(11 * 60_000);
    h.failed(await h.post(h.response(org, request.id, { email })));
    expect(await userExists(email)).toBe(false);
  });

  it('takes the response only from the browser that started the sign-in (no login CSRF)', async () => {
    const email = 'lin@saml.example';
    const first = await h.start(email);
    const second = await h.start(email);
    const xml = h.response(org, first.id, { email });
    h.failed(await h.post(xml, ACS_PATH, 'SAMLResponse', second.binding)); // another browser's cookie
    h.failed(await h.post(xml, ACS_PATH, 'SAMLResponse', '')); // none
    await h.collect(await h.post(xml, ACS_PATH, 'SAMLResponse', first.binding));
  });

  it('refuses an assertion without NameID, and hostile identifiers, without an error page', async () => {
    const request = await h.start('nobody@saml.example');
    const assertion = idp
      .assertion({
        email: 'nobody@saml.example',
        inResponseTo: request.id,
        audience: h.entityId(org),
        recipient: h.acs(),
      })
      .replace(/<saml:NameID[^>]*>[^<]*<\/saml:NameID>/, '');
    h.failed(
      await h.post(
        idp.response({
          inResponseTo: request.id,
          destination: h.acs(),
          inner: sign(assertion, ASSERTION_XPATH),
        }),
      ),
    );
    h.failed(await h.post(h.response(org, '_a\u0000b', { email: 'nobody@saml.example' })));
    const nul = sign(
      idp.logoutRequest({ nameId: 'x\u0000y@saml.example', destination: h.logoutCallback() }),
      '/*',
    );
    expectErrorEnvelope(await h.post(nul, LOGOUT_CALLBACK, 'SAMLRequest'), 400, 'SAML_MESSAGE_INVALID');
    expectErrorEnvelope(
      await h.post(
        sign(idp.logoutResponse({ inResponseTo: '_a\u0000b', destination: h.logoutCallback() }), '/*'),
        LOGOUT_CALLBACK,
      ),
      400,
      'SAML_MESSAGE_INVALID',
    );
  });

  it('answers malformed posts with sso_failed, never an error page', async () => {
    const bodies: [string, Record<string, string>][] = [
      ['', FORM],
      ['SAMLResponse=', FORM],
      ['SAMLResponse=%%%', FORM],
      [`SAMLResponse=${Buffer.from('<not xml').toString('base64')}`, FORM],
      [
        `SAMLResponse=${encodeURIComponent(Buffer.from('<!DOCTYPE r [<!ENTITY x "y">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" InResponseTo="_a">&x;</samlp:Response>').toString('base64'))}`,
        FORM,
      ],
      ['{"SAMLResponse":"x"}', { 'content-type': 'application/json' }],
    ];
    for (const [payload, headers] of bodies)
      h.failed(await ctx.request('POST', ACS_PATH, { payload, headers }));
    const tooLarge = await ctx.request('POST', ACS_PATH, {
      payload: `SAMLResponse=${'A'.repeat(5 * 1024 * 1024 + 10)}`,
      headers: FORM,
    });
    expect(tooLarge.statusCode).toBe(413);
  });

  it('refuses an e-mail outside the SSO domains and a suspended member', async () => {
    const request = await h.start('hal@saml.example');
    h.failed(await h.post(h.response(org, request.id, { email: 'hal@elsewhere.example' })));
    const token = await signIn('ivy@saml.example');
    const ivyId = (await ctx.get(`${API}/auth/me`, { token })).json().data.user.id;
    const suspended = await ctx.patch(`${API}/team/members/${ivyId}/status`, {
      token: owner.token,
      body: { isActive: false },
    });
    expect(suspended.statusCode, suspended.body).toBe(200);
    const again = await h.start('ivy@saml.example');
    h.failed(await h.post(h.response(org, again.id, { email: 'ivy@saml.example' })));
  });

  it('logs out from the service: the session ends at once, the IdP gets a LogoutRequest, its signed answer is taken once', async () => {
    const token = await signIn('jay@saml.example', { sessionIndex: '_idp-session-jay' });
    const res = await ctx.post(`${API}/auth/saml/logout/initiate`, { token });
    expect(res.statusCode, res.body).toBe(200);
    const logout = readRedirect(res.json().data.redirectUrl);
    expect(logout.url.origin + logout.url.pathname).toBe(idp.logoutUrl);
    expect(logout.xml).toContain('>jay@saml.example</saml:NameID>');
    expect(logout.xml).toContain('_idp-session-jay');
    expectErrorEnvelope(await ctx.get(`${API}/auth/me`, { token }), 401, 'SESSION_REVOKED');
    const [entry] = (await auditEntriesOf(ctx, org, 'auth.logout')).slice(-1);
    expect(entry).toMatchObject({ metadata: { sso: 'saml', initiatedBy: 'sp' } });

    const destination = h.logoutCallback();
    // Unsigned, or signed by another key: 400, and the request stays open for the genuine answer.
    const answer = idp.logoutResponse({ inResponseTo: logout.id, destination });
    expectErrorEnvelope(await h.post(answer, LOGOUT_CALLBACK), 400, 'SAML_MESSAGE_INVALID');
    expectErrorEnvelope(
      await h.post(sign(answer, '/*', OTHER_KEYS), LOGOUT_CALLBACK),
      400,
      'SAML_MESSAGE_INVALID',
    );
    // A failed logout signed by the IdP, with a Success status slipped into the unsigned KeyInfo: still a failure.
    const failedAnswer = sign(
      idp.logoutResponse({
        inResponseTo: logout.id,
        destination,
        status: 'urn:oasis:names:tc:SAML:2.0:status:Requester',
      }),
      '/*',
    ).replace(
      /<\/(\w+:)?KeyInfo>/,
      '<samlp:Status xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>$&',
    );
    expectErrorEnvelope(await h.post(failedAnswer, LOGOUT_CALLBACK), 400, 'SAML_MESSAGE_INVALID');
    const done = await h.post(sign(answer, '/*'), LOGOUT_CALLBACK);
    expect(done.statusCode, done.body).toBe(302);
    expect(done.headers.location).toBe(`${ctx.config.appUrl}/login?logout=1`);
    expectErrorEnvelope(await h.post(sign(answer, '/*'), LOGOUT_CALLBACK), 400, 'SAML_MESSAGE_INVALID');
    // A LogoutResponse to no request of this service, and a failed logout at the IdP.
    expectErrorEnvelope(
      await h.post(
        sign(idp.logoutResponse({ inResponseTo: '_unknown', destination }), '/*'),
        LOGOUT_CALLBACK,
      ),
      400,
      'SAML_MESSAGE_INVALID',
    );
    expectErrorEnvelope(
      await ctx.request('POST', LOGOUT_CALLBACK, { payload: 'nothing=here', headers: FORM }),
      400,
      'SAML_MESSAGE_INVALID',
    );

    // A session that SAML did not open ends too, and goes straight back to the dashboard.
    const password = await ctx.login(owner.user.email);
    const plain = await ctx.post(`${API}/auth/saml/logout/initiate`, { token: password });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(plain.json().data).toEqual({ redirectUrl: `${ctx.config.appUrl}/login?logout=1` });
    expectErrorEnvelope(await ctx.get(`${API}/auth/me`, { token: password }), 401, 'SESSION_REVOKED');
    expectErrorEnvelope(await ctx.post(`${API}/auth/saml/logout/initiate`), 401, 'UNAUTHORIZED');
  });

  it('logs out from the IdP: a signed LogoutRequest ends every session of that user in the organization', async () => {
    const first = await signIn('kim@saml.example', { sessionIndex: '_kim-1' });
    const second = await signIn('kim@saml.example', { sessionIndex: '_kim-2' });
    const other = await signIn('lou@saml.example');
    const destination = h.logoutCallback();
    const request = idp.logoutRequest({ nameId: 'kim@saml.example', destination, sessionIndex: '_kim-1' });

    // Unsigned or signed by another key: 400 and nothing ends.
    expectErrorEnvelope(await h.post(request, LOGOUT_CALLBACK, 'SAMLRequest'), 400, 'SAML_MESSAGE_INVALID');
    expectErrorEnvelope(
      await h.post(sign(request, '/*', OTHER_KEYS), LOGOUT_CALLBACK, 'SAMLRequest'),
      400,
      'SAML_MESSAGE_INVALID',
    );
    expect((await ctx.get(`${API}/auth/me`, { token: first })).statusCode).toBe(200);

    const res = await ctx.request('POST', LOGOUT_CALLBACK, {
      payload: samlForm({ SAMLRequest: sign(request, '/*') }) + '&RelayState=back-to-idp',
      headers: FORM,
    });
    expect(res.statusCode, res.body).toBe(302);
    const answer = readRedirect(res.headers.location as string, 'SAMLResponse');
    expect(answer.url.origin + answer.url.pathname).toBe(idp.logoutUrl);
    expect(answer.url.searchParams.get('RelayState')).toBe('back-to-idp');
    expect(answer.attr('InResponseTo')).toBe(/ ID="([^"]+)"/.exec(request)![1]);
    expect(answer.xml).toContain('urn:oasis:names:tc:SAML:2.0:status:Success');
    for (const token of [first, second]) {
      expectErrorEnvelope(await ctx.get(`${API}/auth/me`, { token }), 401, 'SESSION_REVOKED');
    }
    expect((await ctx.get(`${API}/auth/me`, { token: other })).statusCode).toBe(200);
    const revoked = await auditEntriesOf(ctx, org, 'auth.session_revoked');
    expect(revoked.at(-1)).toMatchObject({ metadata: { sso: 'saml', initiatedBy: 'idp', count: 2 } });

    // The same signed request again (a captured one), or one without this service as Destination, or stale, or
    // padded to make signature checking slow: 400, and the new session stays.
    const fresh = await signIn('kim@saml.example');
    const replay = await ctx.request('POST', LOGOUT_CALLBACK, {
      payload: samlForm({ SAMLRequest: sign(request, '/*') }),
      headers: FORM,
    });
    expectErrorEnvelope(replay, 400, 'SAML_MESSAGE_INVALID');
    const undirected = sign(
      idp
        .logoutRequest({ nameId: 'kim@saml.example', destination: h.logoutCallback() })
        .replace(/ Destination="[^"]*"/, ''),
      '/*',
    );
    expectErrorEnvelope(
      await h.post(undirected, LOGOUT_CALLBACK, 'SAMLRequest'),
      400,
      'SAML_MESSAGE_INVALID',
    );
    const stale = sign(
      idp
        .logoutRequest({ nameId: 'kim@saml.example', destination: h.logoutCallback() })
        .replace(/IssueInstant="[^"]*"/, 'IssueInstant="2001-01-01T00:00:00Z"'),
      '/*',
    );
    expectErrorEnvelope(await h.post(stale, LOGOUT_CALLBACK, 'SAMLRequest'), 400, 'SAML_MESSAGE_INVALID');
    const padded = idp
      .logoutRequest({ nameId: 'kim@saml.example', destination: h.logoutCallback() })
      .replace('</samlp:LogoutRequest>', `${'<x/>'.repeat(20_000)}</samlp:LogoutRequest>`);
    expectErrorEnvelope(await h.post(padded, LOGOUT_CALLBACK, 'SAMLRequest'), 400, 'SAML_MESSAGE_INVALID');
    expect((await ctx.get(`${API}/auth/me`, { token: fresh })).statusCode).toBe(200);
  });

  it('sends the browser through TOTP when the organization requires MFA after SSO, and keeps the SAML session', async () => {
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

  it('refuses an encrypted assertion when no SP decryption key is set', async () => {
    const request = await h.start('ned@saml.example');
    const assertion = sign(
      idp.assertion({
        email: 'ned@saml.example',
        inResponseTo: request.id,
        audience: h.entityId(org),
        recipient: h.acs(),
      }),
      ASSERTION_XPATH,
    );
    const inner = await idp.encrypted(assertion, SP_KEYS.cert);
    h.failed(await h.post(idp.response({ inResponseTo: request.id, destination: h.acs(), inner })));
  });

  it('purges answered-or-not requests and remembered assertion ids once they expire', async () => {
    await h.start('oz@saml.example');
    expect((await ctx.db.db.select().from(samlRequests)).length).toBeGreaterThan(0);
    ctx.clock.advance(2 * 86_400_000);
    await ctx.service(JobScheduler).runNow('saml-requests-purge');
    expect(await ctx.db.db.select().from(samlRequests)).toEqual([]);
    expect(await ctx.db.db.select().from(samlAssertions)).toEqual([]);
  });
});

describe('SAML with the service provider’s own keys (SAML_SP_SIGNING_KEY, SAML_SP_DECRYPTION_KEY)', () => {
  let ctx: TestContext;
  let dns: TestDns;
  let org: string;
  const idp = new SamlIdp();
  const h = samlHarness(() => ctx, idp);

  beforeAll(async () => {
    dns = await TestDns.start();
    ctx = await TestContext.create({
      config: { samlSp: { signing: SP_KEYS, decryption: SP_KEYS }, ssoDnsServers: [dns.address] },
    });
    const owner = await ctx.register({ organizationName: 'Keyed SAML' });
    org = owner.organization.id;
    await configureSaml(ctx, dns, owner, idp, 'keyed.example');
  });
  afterAll(async () => {
    await ctx?.close();
    await dns?.stop();
  });

  it('advertises the encryption and signing certificates in the metadata', async () => {
    const res = await ctx.get(`${API}/auth/saml/metadata/${org}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = SP_KEYS.cert.replace(/-----[A-Z ]+-----|\s/g, '');
    expect(res.body).toMatch(/use="encryption"/);
    expect(res.body).toMatch(/use="signing"/);
    expect(res.body.replace(/\s/g, '')).toContain(body);
  });

  it('signs its AuthnRequests and LogoutRequests on the redirect binding', async () => {
    const request = await h.start('pat@keyed.example');
    const query = request.url.search.slice(1);
    const signed = query.slice(0, query.indexOf('&Signature='));
    const verifier = createVerify('RSA-SHA256');
    verifier.update(signed);
    expect(request.url.searchParams.get('SigAlg')).toBe('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
    expect(verifier.verify(SP_KEYS.cert, request.url.searchParams.get('Signature')!, 'base64')).toBe(true);

    const token = await h.collect(await h.post(h.response(org, request.id, { email: 'pat@keyed.example' })));
    const out = await ctx.post(`${API}/auth/saml/logout/initiate`, { token });
    expect(new URL(out.json().data.redirectUrl).searchParams.has('Signature')).toBe(true);
  });

  it('decrypts an encrypted assertion', async () => {
    const request = await h.start('quin@keyed.example');
    const assertion = sign(
      idp.assertion({
        email: 'quin@keyed.example',
        inResponseTo: request.id,
        audience: h.entityId(org),
        recipient: h.acs(),
        groups: ['gov-admins'],
      }),
      ASSERTION_XPATH,
    );
    const inner = await idp.encrypted(assertion, SP_KEYS.cert);
    expect(inner).not.toContain('quin@keyed.example');
    const token = await h.collect(
      await h.post(idp.response({ inResponseTo: request.id, destination: h.acs(), inner })),
    );
    const me = (await ctx.get(`${API}/auth/me`, { token })).json().data;
    expect(me).toMatchObject({ user: { email: 'quin@keyed.example' }, role: 'admin' });

    // Encrypted for another certificate: refused.
    const next = await h.start('quin@keyed.example');
    const foreign = await idp.encrypted(
      sign(
        idp.assertion({
          email: 'quin@keyed.example',
          inResponseTo: next.id,
          audience: h.entityId(org),
          recipient: h.acs(),
        }),
        ASSERTION_XPATH,
      ),
      IDP_KEYS.cert,
    );
    h.failed(await h.post(idp.response({ inResponseTo: next.id, destination: h.acs(), inner: foreign })));
  });
});
