import { deflateRawSync } from 'node:zlib';
import { and, eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samlRequests } from '../libs/identity/src/sso/sso.schema.js';
import { sessions } from '../libs/identity/src/sessions/session.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import {
  IDP_KEYS,
  OTHER_KEYS,
  readRedirect,
  redirectQuery,
  SamlIdp,
  samlForm,
  sign,
} from './support/saml-idp.js';

const API = '/api/v1';
const LOGOUT_CALLBACK = `${API}/auth/saml/logout/callback`;
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/**
 * Issue 30, item 7: Entra ID answers SP-initiated logout on the HTTP-Redirect binding, so the logout callback takes a
 * LogoutResponse signed in the query (`SigAlg`, `Signature`) on GET too, checked with the IdP's certificate.
 */
describe('SAML single logout: the LogoutResponse on the HTTP-Redirect binding', () => {
  let ctx: TestContext;
  let owner: Registered;
  let org: string;
  const idp = new SamlIdp();
  const destination = () => `${ctx.config.publicUrl}${LOGOUT_CALLBACK}`;
  const loggedOut = () => `${ctx.config.appUrl}/login?logout=1`;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Entra logout' });
    org = owner.organization.id;
    await ctx.setPlan(org, 'governance');
    const put = await ctx.request('PUT', `${API}/sso/config`, {
      token: owner.token,
      body: {
        provider: 'saml',
        emailDomains: ['entra-logout.example'],
        saml: {
          entryPoint: idp.entryPoint,
          idpCertificate: IDP_KEYS.cert,
          idpIssuer: idp.entityId,
          logoutUrl: idp.logoutUrl,
        },
      },
    });
    expect(put.statusCode, put.body).toBe(200);
  });
  afterAll(async () => ctx?.close());

  /**
   * A session as the ACS leaves it after a SAML sign-in (its NameID and SessionIndex kept for logout). The sign-in
   * itself is sso-saml's subject; here the session of a password login is given those fields, so that this file
   * tests the logout alone.
   */
  async function samlSession(): Promise<string> {
    const token = await ctx.login(owner.user.email);
    const { jti } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as {
      jti: string;
    };
    const marked = await ctx.db.db
      .update(sessions)
      .set({
        samlNameId: owner.user.email,
        samlNameIdFormat: EMAIL_FORMAT,
        samlSessionIndex: '_entra-session',
      })
      .where(eq(sessions.jti, jti))
      .returning({ id: sessions.id });
    expect(marked).toHaveLength(1);
    return token;
  }

  /** Logs out from the service: the id of the LogoutRequest sent to the IdP (its session already revoked). */
  async function startLogout(): Promise<string> {
    const token = await samlSession();
    const res = await ctx.post(`${API}/auth/saml/logout/initiate`, { token });
    expect(res.statusCode, res.body).toBe(200);
    const request = readRedirect(res.json().data.redirectUrl);
    expect(request.url.origin + request.url.pathname).toBe(idp.logoutUrl);
    expect(request.xml).toContain(`>${owner.user.email}</saml:NameID>`);
    expectErrorEnvelope(await ctx.get(`${API}/auth/me`, { token }), 401, 'SESSION_REVOKED');
    return request.id;
  }

  const answer = (inResponseTo: string, over: { destination?: string; status?: string } = {}) =>
    idp.logoutResponse({ inResponseTo, destination: destination(), ...over });
  const callback = (query: string) => ctx.get(`${LOGOUT_CALLBACK}?${query}`);
  const refused = (res: LightMyRequestResponse) => {
    expectErrorEnvelope(res, 400, 'SAML_MESSAGE_INVALID');
    expect(res.headers.location).toBeUndefined();
  };
  const pending = async (id: string) =>
    (
      await ctx.db.db
        .select()
        .from(samlRequests)
        .where(and(eq(samlRequests.id, id), eq(samlRequests.kind, 'logout')))
    ).length === 1;

  it('takes the IdP’s signed LogoutResponse on GET once, with its RelayState, and sends the browser to the login page', async () => {
    const id = await startLogout();
    const query = redirectQuery(answer(id), { relayState: 'after/logout?x=1&y=2' });
    expect(query).toMatch(/^SAMLResponse=[^&]+&RelayState=[^&]+&SigAlg=[^&]+&Signature=[^&]+$/);
    const res = await callback(query);
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(loggedOut());
    expect(await pending(id)).toBe(false);
    // The same message again (a captured URL): the request was answered.
    refused(await callback(query));

    // RSA-SHA512, without RelayState, also goes through.
    const next = await startLogout();
    const sha512 = await callback(redirectQuery(answer(next), { hash: 'RSA-SHA512' }));
    expect(sha512.statusCode, sha512.body).toBe(302);
    expect(sha512.headers.location).toBe(loggedOut());
  });

  it('refuses unsigned, SHA-1, wrongly signed and tampered messages with 400, leaving the request open', async () => {
    const id = await startLogout();
    const xml = answer(id);
    const signed = redirectQuery(xml, { relayState: 'state-1' });
    const [samlResponse, relayState, sigAlg, signature] = signed.split('&') as [
      string,
      string,
      string,
      string,
    ];
    // Another LogoutResponse to the same request (its own ID), which the IdP did not sign.
    const otherMessage = redirectQuery(answer(id), { keys: null });
    for (const query of [
      redirectQuery(xml, { keys: null }), // unsigned
      redirectQuery(xml, { keys: null, relayState: 'x' }),
      [samlResponse, relayState, sigAlg].join('&'), // SigAlg without Signature
      [samlResponse, relayState, signature].join('&'), // Signature without SigAlg
      redirectQuery(xml, { keys: OTHER_KEYS }), // another key
      redirectQuery(xml, { hash: 'RSA-SHA1' }), // SHA-1, even by the IdP's key
      [samlResponse, 'RelayState=state-2', sigAlg, signature].join('&'), // RelayState changed after signing
      [samlResponse, sigAlg, signature].join('&'), // RelayState dropped after signing
      [otherMessage.split('&')[0], relayState, sigAlg, signature].join('&'), // another message under the signature
      // SigAlg swapped to another allowed algorithm than the one signed with
      [
        samlResponse,
        relayState,
        `SigAlg=${encodeURIComponent('http://www.w3.org/2001/04/xmldsig-more#rsa-sha512')}`,
        signature,
      ].join('&'),
      [
        samlResponse,
        relayState,
        sigAlg,
        'Signature=' + encodeURIComponent(Buffer.alloc(256, 1).toString('base64')),
      ].join('&'),
      [samlResponse, samlResponse, relayState, sigAlg, signature].join('&'), // a parameter twice
      `${signed}&Signature=${encodeURIComponent('AAAA')}`,
    ]) {
      refused(await callback(query));
    }
    expect(await pending(id)).toBe(true);

    // The genuine message still ends the logout.
    const res = await callback(signed);
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(loggedOut());
  });

  it('refuses, signed by the IdP, a failure status, another Destination or issuer, and an unknown request', async () => {
    const id = await startLogout();
    for (const xml of [
      answer(id, { status: 'urn:oasis:names:tc:SAML:2.0:status:Responder' }),
      answer(id, { destination: 'https://elsewhere.example/logout/callback' }),
      answer(id).replace(/ Destination="[^"]*"/, ''),
      answer(id).replace(`>${idp.entityId}<`, '>https://another-idp.example/metadata<'),
      answer('_never-sent-by-this-service'),
      answer(id)
        .replace('LogoutResponse', 'LogoutRequest')
        .replace('</samlp:LogoutResponse>', '</samlp:LogoutRequest>'),
    ]) {
      refused(await callback(redirectQuery(xml)));
    }
    expect(await pending(id)).toBe(true);
  });

  it('refuses malformed queries, oversized and undeflated messages, and an IdP-initiated LogoutRequest on GET', async () => {
    const id = await startLogout();
    const xml = answer(id);
    const sigAlg = `SigAlg=${encodeURIComponent('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')}`;
    const bomb = deflateRawSync(Buffer.from(`<a>${' '.repeat(200_000)}</a>`)).toString('base64');
    const padded = xml.replace(
      '</samlp:LogoutResponse>',
      `<!--${'x'.repeat(70 * 1024)}--></samlp:LogoutResponse>`,
    );
    for (const query of [
      '',
      'SAMLResponse=',
      'SAMLResponse=%E0%A4%A&SigAlg=x&Signature=y', // bad percent-encoding
      `SAMLResponse=${encodeURIComponent(Buffer.from(xml).toString('base64'))}&${sigAlg}&Signature=AAAA`, // not deflated
      `SAMLResponse=${encodeURIComponent(bomb)}&${sigAlg}&Signature=AAAA`, // inflates past 64 KB
      redirectQuery(padded),
      `SAMLResponse=${'A'.repeat(20_000)}&${sigAlg}&Signature=AAAA`,
      redirectQuery(sign(idp.logoutRequest({ nameId: owner.user.email, destination: destination() }), '/*'), {
        param: 'SAMLRequest',
      }),
    ]) {
      refused(await callback(query));
    }
    expect(await pending(id)).toBe(true);
    // The HTTP-POST binding is unchanged beside it.
    const posted = await ctx.request('POST', LOGOUT_CALLBACK, {
      payload: samlForm({ SAMLResponse: sign(xml, '/*') }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(posted.statusCode, posted.body).toBe(302);
    expect(posted.headers.location).toBe(loggedOut());
  });

  it('does not answer a LogoutResponse to another organization’s request with this organization’s IdP', async () => {
    const other = await ctx.register({ organizationName: 'Other SAML' });
    await ctx.setPlan(other.organization.id, 'governance');
    const put = await ctx.request('PUT', `${API}/sso/config`, {
      token: other.token,
      body: {
        provider: 'saml',
        emailDomains: ['other-logout.example'],
        saml: {
          entryPoint: 'https://other-idp.example/sso',
          idpCertificate: OTHER_KEYS.cert,
          logoutUrl: 'https://other-idp.example/slo',
        },
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    // A logout of this organization answered by a message signed with the other organization's IdP key.
    const id = await startLogout();
    refused(await callback(redirectQuery(answer(id), { keys: OTHER_KEYS })));
    expect(await pending(id)).toBe(true);
  });
});
