import { describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { OTHER_KEYS, readRedirect, samlForm, sign } from './support/saml-idp.js';
import { API, FORM, LOGOUT_CALLBACK, samlSuite } from './support/saml-suite.js';

/**
 * SAML single logout on the POST binding: started by the service (the session ends at once, the IdP's signed answer
 * is taken once) and started by the IdP (a signed LogoutRequest ends that user's sessions in the organization).
 * The LogoutResponse on the HTTP-Redirect binding: sso-saml-logout-redirect.
 */
describe('SAML single logout', () => {
  const s = samlSuite({ organizationName: 'Acme SAML', domain: 'saml.example' });

  it('logs out from the service: the session ends at once, the IdP gets a LogoutRequest, its signed answer is taken once', async () => {
    const { ctx, owner, org, idp, h, signIn } = s;
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
    const { ctx, org, idp, h, signIn } = s;
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
});
