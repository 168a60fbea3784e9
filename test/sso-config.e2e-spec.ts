import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizations } from '../libs/identity/src/organizations/organization.schema.js';
import { ssoDomains } from '../libs/identity/src/sso/sso.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { OidcIdp } from './support/oidc-idp.js';
import { SSO_DOMAINS, type SsoDomainView, verifySsoDomains } from './support/sso-domains.js';
import { TestDns } from './support/test-dns.js';

const SSO = '/api/v1/sso/config';
const CLIENT_SECRET = 'oidc-client-secret-do-not-echo';
const CERT = readFileSync(join(import.meta.dirname, 'fixtures', 'saml-idp.cert.pem'), 'utf8');
const CERT_BODY = CERT.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
const KEY = readFileSync(join(import.meta.dirname, 'fixtures', 'saml-idp.key.pem'), 'utf8');

describe('SSO configuration', () => {
  let ctx: TestContext;
  let dns: TestDns;
  /** Default settings: IdP URLs must be https and public. */
  let strict: TestContext;
  let idp: OidcIdp;
  let owner: Registered;
  let rival: Registered;
  let admin: { token: string; userId: string };
  let member: { token: string };
  let viewer: { token: string };

  const oidcBody = (over: Record<string, unknown> = {}) => ({
    provider: 'oidc',
    emailDomains: ['Acme.example', 'acme.example', 'corp.acme.example'],
    requireMfaEvenWithSso: true,
    roleMappingRules: [
      { pattern: '^gov-admins$', role: 'admin' },
      { pattern: 'auditors', role: 'viewer' },
    ],
    oidc: { issuer: idp.issuer, clientId: 'governance', clientSecret: CLIENT_SECRET, groupsClaim: 'roles' },
    ...over,
  });
  const samlBody = (over: Record<string, unknown> = {}) => ({
    provider: 'saml',
    emailDomains: ['saml.example'],
    saml: {
      entryPoint: 'http://127.0.0.1:9/sso',
      idpCertificate: CERT_BODY,
      idpIssuer: 'urn:test:idp',
      logoutUrl: 'http://127.0.0.1:9/slo',
    },
    ...over,
  });
  const put = (body: unknown, token = owner.token, context = ctx) =>
    context.request('PUT', SSO, { token, body });
  /** The organization's claim on `domain`, with the TXT record that proves it. */
  const claimOf = async (token: string, domain: string): Promise<SsoDomainView> => {
    const res = await ctx.get(SSO_DOMAINS, { token });
    expect(res.statusCode, res.body).toBe(200);
    const claim = (res.json().data as SsoDomainView[]).find((c) => c.domain === domain);
    expect(claim, domain).toBeDefined();
    return claim!;
  };
  const verify = (token: string, domain: string) => ctx.post(`${SSO_DOMAINS}/${domain}/verify`, { token });
  const holdersOf = (domain: string) =>
    ctx.db.db.select().from(ssoDomains).where(eq(ssoDomains.domain, domain));
  const stored = async (organizationId: string) =>
    (await ctx.db.db.select().from(organizations).where(eq(organizations.id, organizationId)))[0]!;

  beforeAll(async () => {
    idp = await OidcIdp.start({
      redirectUri: 'http://localhost:3000/api/v1/auth/sso/callback',
      accounts: {},
      clientSecret: CLIENT_SECRET,
    });
    dns = await TestDns.start();
    ctx = await TestContext.create({
      config: { ssoAllowInsecureHttp: true, ssoAllowPrivateNetworks: true, ssoDnsServers: [dns.address] },
    });
    strict = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Acme' });
    rival = await ctx.register({ organizationName: 'Rival' });
    await ctx.setPlan(owner.organization.id, 'governance');
    await ctx.setPlan(rival.organization.id, 'governance');
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
  });
  afterAll(async () => {
    await ctx?.close();
    await strict?.close();
    await idp?.close();
    await dns?.stop();
  });

  it('is read by owners and admins and written by owners only, on a plan with sso', async () => {
    expectErrorEnvelope(await ctx.get(SSO, { token: owner.token }), 404, 'NOT_FOUND');
    expectErrorEnvelope(await ctx.get(SSO, { token: admin.token }), 404, 'NOT_FOUND');
    // An admin who could write the IdP or its role mapping could sign in as an owner or grant the role
    // (docs/security.md, "Accounts and organizations that cannot be taken over").
    expectErrorEnvelope(await put(oidcBody(), admin.token), 403, 'FORBIDDEN');
    expectErrorEnvelope(await ctx.delete(SSO, { token: admin.token }), 403, 'FORBIDDEN');
    for (const token of [member.token, viewer.token]) {
      expectErrorEnvelope(await ctx.get(SSO, { token }), 403, 'FORBIDDEN');
      expectErrorEnvelope(await put(oidcBody(), token), 403, 'FORBIDDEN');
      expectErrorEnvelope(await ctx.post(`${SSO}/test`, { token }), 403, 'FORBIDDEN');
      expectErrorEnvelope(await ctx.delete(SSO, { token }), 403, 'FORBIDDEN');
    }
    const sandbox = await ctx.register({ organizationName: 'Small' });
    expectErrorEnvelope(await ctx.get(SSO, { token: sandbox.token }), 403, 'UPGRADE_REQUIRED');
    expectErrorEnvelope(
      await put(oidcBody({ emailDomains: ['small.example'] }), sandbox.token),
      403,
      'UPGRADE_REQUIRED',
    );
    expect(await ctx.db.db.select().from(ssoDomains)).toHaveLength(0);
  });

  it('stores an OIDC configuration with the secret sealed and never shown, and audits it without the secret', async () => {
    const res = await put(oidcBody());
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain(CLIENT_SECRET);
    expect(res.json().data).toEqual({
      provider: 'oidc',
      emailDomains: ['acme.example', 'corp.acme.example'],
      domains: [
        { domain: 'acme.example', status: 'pending' },
        { domain: 'corp.acme.example', status: 'pending' },
      ],
      requireMfaEvenWithSso: true,
      enforceSso: false,
      testPassedAt: null,
      roleMappingRules: [
        { pattern: '^gov-admins$', role: 'admin' },
        { pattern: 'auditors', role: 'viewer' },
      ],
      oidc: {
        issuer: idp.issuer,
        clientId: 'governance',
        clientSecretSet: true,
        scopes: ['openid', 'email', 'profile'],
        groupsClaim: 'roles',
        redirectUri: `${ctx.config.publicUrl}/api/v1/auth/sso/callback`,
      },
      updatedAt: expect.any(String),
      updatedBy: owner.user.id,
    });
    const got = await ctx.get(SSO, { token: owner.token });
    expect(got.json().data).toEqual(res.json().data);
    const row = await stored(owner.organization.id);
    expect(JSON.stringify(row.ssoConfig)).not.toContain(CLIENT_SECRET);
    expect((row.ssoConfig as { oidc: { clientSecretSealed: string } }).oidc.clientSecretSealed).toBeTruthy();
    const [entry] = await auditEntriesOf(ctx, owner.organization.id, 'sso.config.update');
    expect(entry!.metadata).toMatchObject({ provider: 'oidc', secretChanged: true, roleMappingRules: 2 });
    expect(JSON.stringify(entry)).not.toContain(CLIENT_SECRET);
  });

  it('keeps the stored secret when it is omitted for the same client, and asks for it for another', async () => {
    const { clientSecret: _omitted, ...withoutSecret } = oidcBody().oidc;
    const kept = await put(oidcBody({ oidc: withoutSecret, requireMfaEvenWithSso: false }));
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json().data.oidc.clientSecretSet).toBe(true);
    expect(kept.json().data.requireMfaEvenWithSso).toBe(false);
    const other = await put(oidcBody({ oidc: { ...withoutSecret, clientId: 'another-client' } }));
    expectErrorEnvelope(other, 400, 'VALIDATION_ERROR');
    expect(other.body).toContain('oidc.clientSecret');
    expect((await ctx.get(SSO, { token: owner.token })).json().data.oidc.clientId).toBe('governance');
  });

  it('refuses bad configurations with 400 and changes nothing', async () => {
    const before = await ctx.get(SSO, { token: owner.token });
    const cases: Array<[unknown, string]> = [
      [oidcBody({ provider: 'ldap' }), 'provider'],
      [oidcBody({ emailDomains: [] }), 'emailDomains'],
      [oidcBody({ emailDomains: ['not a domain'] }), 'emailDomains'],
      [oidcBody({ emailDomains: ['localhost'] }), 'emailDomains'],
      [oidcBody({ emailDomains: ['acme.example', 'Gmail.com'] }), 'public mail provider'],
      [oidcBody({ emailDomains: Array.from({ length: 21 }, (_, i) => `d${i}.example`) }), 'emailDomains'],
      [oidcBody({ roleMappingRules: [{ pattern: 'a'.repeat(257), role: 'admin' }] }), 'pattern'],
      [
        oidcBody({ roleMappingRules: [{ pattern: '(unclosed', role: 'admin' }] }),
        'roleMappingRules.0.pattern',
      ],
      [oidcBody({ roleMappingRules: [{ pattern: '(a)\\1', role: 'admin' }] }), 'roleMappingRules.0.pattern'],
      [oidcBody({ roleMappingRules: [{ pattern: 'x', role: 'owner' }] }), 'role'],
      [oidcBody({ oidc: undefined }), 'oidc'],
      [oidcBody({ oidc: { ...oidcBody().oidc, issuer: 'ftp://idp.example' } }), 'oidc.issuer'],
      [oidcBody({ oidc: { ...oidcBody().oidc, issuer: 'https://user:pw@idp.example' } }), 'oidc.issuer'],
      [oidcBody({ oidc: { ...oidcBody().oidc, unknown: true } }), 'unknown'],
      [oidcBody({ oidc: 'https://idp.example' }), 'oidc'],
      [samlBody({ saml: undefined }), 'saml'],
      [
        samlBody({ saml: { ...samlBody().saml, idpCertificate: 'not a certificate' } }),
        'saml.idpCertificate',
      ],
      [samlBody({ saml: { ...samlBody().saml, idpCertificate: 'QUJD' } }), 'saml.idpCertificate'],
      [samlBody({ saml: { ...samlBody().saml, idpCertificate: KEY } }), 'saml.idpCertificate'],
      [samlBody({ saml: { ...samlBody().saml, logoutUrl: 'javascript:alert(1)' } }), 'saml.logoutUrl'],
      [null, 'JSON object'],
      [oidcBody({ roleMappingRules: [null] }), 'roleMappingRules'],
      [oidcBody({ roleMappingRules: 'admin' }), 'roleMappingRules'],
      [oidcBody({ emailDomains: [1] }), 'emailDomains'],
      [oidcBody({ emailDomains: 'acme.example' }), 'emailDomains'],
      [oidcBody({ oidc: [] }), 'oidc'],
      [oidcBody({ oidc: { ...oidcBody().oidc, scopes: 'openid' } }), 'scopes'],
      [oidcBody({ requireMfaEvenWithSso: 'yes' }), 'requireMfaEvenWithSso'],
    ];
    for (const [body, field] of cases) {
      const res = await put(body);
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(res.body, JSON.stringify(body)?.slice(0, 200)).toContain(field);
    }
    // With the defaults, an IdP URL must be https.
    const strictOwner = await strict.register({ organizationName: 'Strict' });
    await strict.setPlan(strictOwner.organization.id, 'governance');
    const http = await put(oidcBody({ emailDomains: ['strict.example'] }), strictOwner.token, strict);
    expectErrorEnvelope(http, 400, 'VALIDATION_ERROR');
    expect(http.body).toContain('must be an https URL');
    expect((await ctx.get(SSO, { token: owner.token })).json()).toEqual(before.json());
  });

  it('gives an e-mail domain to one organization at most, and frees it on deletion', async () => {
    // Listing a domain another organization lists is a claim, not a conflict: nothing routes until it is verified.
    // Written as POST /sso/domains reads one (NFKC, lower case, no trailing dot): full-width letters and a final dot
    // name the same domains, not look-alikes of them.
    const listed = await put(samlBody({ emailDomains: ['rival.example.', 'ＡＣＭＥ.example'] }), rival.token);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().data.domains).toEqual([
      { domain: 'acme.example', status: 'pending' },
      { domain: 'rival.example', status: 'pending' },
    ]);
    const rivalDomains = await ctx.db.db
      .select()
      .from(ssoDomains)
      .where(eq(ssoDomains.organizationId, rival.organization.id));
    expect(rivalDomains).toHaveLength(0);

    // The first to verify owns it; the second's verification is refused, even with its own record published.
    await verifySsoDomains(ctx, owner.token, dns, ['acme.example']);
    const ownerAcme = await claimOf(owner.token, 'acme.example');
    const rivalAcme = await claimOf(rival.token, 'acme.example');
    expect(rivalAcme.record.name).toBe(ownerAcme.record.name);
    expect(rivalAcme.record.value).not.toBe(ownerAcme.record.value);
    dns.setTxt(rivalAcme.record.name, ownerAcme.record.value, rivalAcme.record.value);
    const taken = await verify(rival.token, 'acme.example');
    expectErrorEnvelope(taken, 409, 'SSO_DOMAIN_TAKEN');
    expect(taken.json().error).toContain('acme.example');
    expect((await holdersOf('acme.example')).map((h) => h.organizationId)).toEqual([owner.organization.id]);
    expect((await claimOf(rival.token, 'acme.example')).status).toBe('pending');
    // Its other domain is its own to verify.
    await verifySsoDomains(ctx, rival.token, dns, ['rival.example']);

    // Two organizations verifying one new domain at once: one wins.
    const [a, b] = await Promise.all([
      put(oidcBody({ emailDomains: ['acme.example', 'contested.example'] })),
      put(samlBody({ emailDomains: ['rival.example', 'acme.example', 'contested.example'] }), rival.token),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    const ownerContested = await claimOf(owner.token, 'contested.example');
    const rivalContested = await claimOf(rival.token, 'contested.example');
    dns.setTxt(ownerContested.record.name, ownerContested.record.value, rivalContested.record.value);
    const [va, vb] = await Promise.all([
      verify(owner.token, 'contested.example'),
      verify(rival.token, 'contested.example'),
    ]);
    expect([va.statusCode, vb.statusCode].sort()).toEqual([200, 409]);
    expectErrorEnvelope(va.statusCode === 409 ? va : vb, 409, 'SSO_DOMAIN_TAKEN');
    const holders = await holdersOf('contested.example');
    expect(holders).toHaveLength(1);
    expect(holders[0]!.organizationId).toBe(
      va.statusCode === 200 ? owner.organization.id : rival.organization.id,
    );

    const deleted = await ctx.delete(SSO, { token: owner.token });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json().data).toEqual({ deleted: true });
    expectErrorEnvelope(await ctx.get(SSO, { token: owner.token }), 404, 'NOT_FOUND');
    expectErrorEnvelope(await ctx.delete(SSO, { token: owner.token }), 404, 'NOT_FOUND');
    expect(await auditEntriesOf(ctx, owner.organization.id, 'sso.config.delete')).toHaveLength(1);
    expect(await holdersOf('acme.example')).toHaveLength(0);
    // Freed: the rival's pending claim now verifies, and the domain is its own.
    const now = await verify(rival.token, 'acme.example');
    expect(now.statusCode, now.body).toBe(200);
    expect(now.json().data).toMatchObject({ domain: 'acme.example', status: 'verified' });
    expect((await holdersOf('acme.example')).map((h) => h.organizationId)).toEqual([rival.organization.id]);
  });

  it('tests an OIDC configuration against the real identity provider', async () => {
    expect((await put(oidcBody({ emailDomains: ['oidc-test.example'] }))).statusCode).toBe(200);
    const res = await ctx.post(`${SSO}/test`, { token: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      ok: true,
      checks: [
        { name: 'issuer_address', ok: true, detail: expect.stringContaining('127.0.0.1') },
        { name: 'discovery', ok: true, detail: `issuer ${idp.issuer}` },
        { name: 'endpoints_address', ok: true, detail: 'every endpoint resolves to an allowed address' },
        { name: 'authorization_code', ok: true, detail: 'response type code supported' },
        { name: 'pkce_s256', ok: true, detail: 'S256 supported' },
        { name: 'jwks', ok: true, detail: 'jwks_uri present' },
      ],
    });

    // An issuer that is not the IdP's: discovery fails, and says so.
    const wrong = await put(
      oidcBody({
        emailDomains: ['oidc-test.example'],
        oidc: { ...oidcBody().oidc, issuer: `${idp.issuer}/tenant` },
      }),
    );
    expect(wrong.statusCode).toBe(200);
    const failed = (await ctx.post(`${SSO}/test`, { token: owner.token })).json().data;
    expect(failed.ok).toBe(false);
    expect(failed.checks.at(-1)).toMatchObject({ name: 'discovery', ok: false });
    expect(JSON.stringify(failed)).not.toContain(CLIENT_SECRET);
  });

  it('refuses to contact an IdP on a private address unless SSO_ALLOW_PRIVATE_NETWORKS is set', async () => {
    const guarded = await TestContext.create({ config: { ssoAllowInsecureHttp: true } });
    try {
      const boss = await guarded.register({ organizationName: 'Guarded' });
      await guarded.setPlan(boss.organization.id, 'governance');
      expect(
        (await put(oidcBody({ emailDomains: ['guarded.example'] }), boss.token, guarded)).statusCode,
      ).toBe(200);
      const res = (await guarded.post(`${SSO}/test`, { token: boss.token })).json().data;
      expect(res).toEqual({
        ok: false,
        checks: [
          {
            name: 'issuer_address',
            ok: false,
            detail: expect.stringMatching(/not allowed|private|loopback/i),
          },
        ],
      });
    } finally {
      await guarded.close();
    }
  });

  it('stores a SAML configuration, shows its certificate and SP addresses, and tests its validity with the clock', async () => {
    const res = await put(samlBody({ emailDomains: ['saml-test.example'] }));
    expect(res.statusCode, res.body).toBe(200);
    const api = `${ctx.config.publicUrl}/api/v1`;
    expect(res.json().data.saml).toEqual({
      entryPoint: 'http://127.0.0.1:9/sso',
      idpCertificate: {
        subject: expect.stringContaining('CN=Test SAML IdP'),
        validFrom: expect.any(String),
        validTo: expect.stringMatching(/^2036-/),
        fingerprint256: expect.stringMatching(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/),
      },
      idpIssuer: 'urn:test:idp',
      groupsAttribute: 'groups',
      logoutUrl: 'http://127.0.0.1:9/slo',
      spEntityId: `${api}/auth/saml/metadata/${owner.organization.id}`,
      acsUrl: `${api}/auth/saml/callback`,
      metadataUrl: `${api}/auth/saml/metadata/${owner.organization.id}`,
      sloUrl: `${api}/auth/saml/logout/callback`,
    });
    expect(res.json().data).not.toHaveProperty('oidc');
    // A PEM with its armour is stored the same way.
    expect(
      (
        await put(
          samlBody({
            emailDomains: ['saml-test.example'],
            saml: { ...samlBody().saml, idpCertificate: CERT },
          }),
        )
      ).statusCode,
    ).toBe(200);

    const tested = (await ctx.post(`${SSO}/test`, { token: owner.token })).json().data;
    expect(tested.ok).toBe(true);
    expect(tested.checks.map((c: { name: string }) => c.name)).toEqual([
      'certificate',
      'certificate_validity',
      'entry_point_address',
      'logout_url_address',
    ]);
    ctx.clock.advance(11 * 365 * 86_400_000);
    // Eleven years on, the session has expired too: sign in again.
    const token = await ctx.login(owner.user.email);
    const expired = (await ctx.post(`${SSO}/test`, { token })).json().data;
    expect(expired.ok).toBe(false);
    expect(expired.checks[1]).toMatchObject({
      name: 'certificate_validity',
      ok: false,
      detail: expect.stringContaining('expired at 2036-'),
    });
  });
});
