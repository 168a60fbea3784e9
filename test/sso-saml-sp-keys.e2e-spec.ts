import { createVerify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ASSERTION_XPATH, IDP_KEYS, sign, SP_KEYS } from './support/saml-idp.js';
import { API, samlSuite } from './support/saml-suite.js';

/**
 * SAML with the service provider's own keys (SAML_SP_SIGNING_KEY, SAML_SP_DECRYPTION_KEY): the certificates in the
 * metadata, signed AuthnRequests and LogoutRequests on the redirect binding, and encrypted assertions.
 */
describe('SAML with the service provider’s own keys (SAML_SP_SIGNING_KEY, SAML_SP_DECRYPTION_KEY)', () => {
  const s = samlSuite({
    organizationName: 'Keyed SAML',
    domain: 'keyed.example',
    config: { samlSp: { signing: SP_KEYS, decryption: SP_KEYS } },
  });

  it('advertises the encryption and signing certificates in the metadata', async () => {
    const { ctx, org } = s;
    const res = await ctx.get(`${API}/auth/saml/metadata/${org}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = SP_KEYS.cert.replace(/-----[A-Z ]+-----|\s/g, '');
    expect(res.body).toMatch(/use="encryption"/);
    expect(res.body).toMatch(/use="signing"/);
    expect(res.body.replace(/\s/g, '')).toContain(body);
  });

  it('signs its AuthnRequests and LogoutRequests on the redirect binding', async () => {
    const { ctx, org, h } = s;
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
    const { ctx, org, idp, h } = s;
    const request = await h.start('quin@keyed.example');
    const assertion = sign(
      h.assertion(org, request.id, { email: 'quin@keyed.example', groups: ['gov-admins'] }),
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
      sign(h.assertion(org, next.id, { email: 'quin@keyed.example' }), ASSERTION_XPATH),
      IDP_KEYS.cert,
    );
    h.failed(await h.post(idp.response({ inResponseTo: next.id, destination: h.acs(), inner: foreign })));
  });
});
