import { describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/assertions.js';
import { ASSERTION_XPATH, OTHER_KEYS, RESPONSE_XPATH, sign, SP_KEYS } from './support/saml-idp.js';
import { ACS_PATH, API, configureSaml, FORM, LOGOUT_CALLBACK, samlSuite } from './support/saml-suite.js';

/**
 * What the SAML callback refuses, always with a redirect to the dashboard's sso_failed page and never an error page:
 * unsigned, foreign-key, tampered and wrapped signatures; a wrong audience, recipient, destination, age or
 * InResponseTo; another browser's response; hostile identifiers and malformed posts; an address outside the SSO
 * domains or a suspended member; an encrypted assertion without an SP decryption key.
 */
describe('SAML single sign-on: what the callback refuses', () => {
  const s = samlSuite({ organizationName: 'Acme SAML', domain: 'saml.example' });

  it('refuses unsigned messages, another key, and a tampered assertion', async () => {
    const { org, idp, h, userExists } = s;
    const email = 'eve@saml.example';

    let request = await h.start(email);
    h.failed(
      await h.post(
        idp.response({
          inResponseTo: request.id,
          destination: h.acs(),
          inner: h.assertion(org, request.id, { email }),
        }),
      ),
    );
    request = await h.start(email);
    h.failed(
      await h.post(
        idp.response({
          inResponseTo: request.id,
          destination: h.acs(),
          inner: sign(h.assertion(org, request.id, { email }), ASSERTION_XPATH, OTHER_KEYS),
        }),
      ),
    );
    request = await h.start(email);
    const forgedResponse = sign(
      idp.response({
        inResponseTo: request.id,
        destination: h.acs(),
        inner: h.assertion(org, request.id, { email }),
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
    const { org, idp, h, userExists } = s;
    const victim = 'vic@saml.example';
    const attacker = 'mallory@saml.example';

    // 1. The genuine signed assertion hidden in Extensions; an unsigned evil assertion in its place, carrying a
    //    copy of the genuine signature.
    let request = await h.start(victim);
    const genuine = sign(h.assertion(org, request.id, { email: victim }), ASSERTION_XPATH);
    const signature = /<(\w+:)?Signature[\s\S]*<\/(\w+:)?Signature>/.exec(genuine)![0];
    const evil = h
      .assertion(org, request.id, { email: attacker })
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
        inner: h.assertion(org, request.id, { email: victim }),
      }),
      RESPONSE_XPATH,
    );
    const responseSignature = /<(\w+:)?Signature[\s\S]*<\/(\w+:)?Signature>/.exec(signedResponse)![0];
    const wrapped = idp
      .response({
        inResponseTo: request.id,
        destination: h.acs(),
        id: '_evil-response',
        inner: h.assertion(org, request.id, { email: attacker }),
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
        h.assertion(org, request.id, { email: attacker }) +
        sign(h.assertion(org, request.id, { email: victim }), ASSERTION_XPATH),
    });
    h.failed(await h.post(both));
    expect(await userExists(attacker)).toBe(false);
  });

  it('refuses a wrong audience, recipient or destination, an expired assertion, and an unknown or foreign InResponseTo', async () => {
    const { ctx, dns, org, idp, h, userExists } = s;
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
    const misdirected = sign(h.assertion(org, request.id, { email }), ASSERTION_XPATH);
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
    const { org, h } = s;
    const email = 'lin@saml.example';
    const first = await h.start(email);
    const second = await h.start(email);
    const xml = h.response(org, first.id, { email });
    h.failed(await h.post(xml, ACS_PATH, 'SAMLResponse', second.binding)); // another browser's cookie
    h.failed(await h.post(xml, ACS_PATH, 'SAMLResponse', '')); // none
    await h.collect(await h.post(xml, ACS_PATH, 'SAMLResponse', first.binding));
  });

  it('refuses an assertion without NameID, and hostile identifiers, without an error page', async () => {
    const { org, idp, h } = s;
    const request = await h.start('nobody@saml.example');
    const assertion = h
      .assertion(org, request.id, { email: 'nobody@saml.example' })
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
    const { ctx, h } = s;
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
    const { ctx, owner, org, h, signIn } = s;
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

  it('refuses an encrypted assertion when no SP decryption key is set', async () => {
    const { org, idp, h } = s;
    const request = await h.start('ned@saml.example');
    const assertion = sign(h.assertion(org, request.id, { email: 'ned@saml.example' }), ASSERTION_XPATH);
    const inner = await idp.encrypted(assertion, SP_KEYS.cert);
    h.failed(await h.post(idp.response({ inResponseTo: request.id, destination: h.acs(), inner })));
  });
});
