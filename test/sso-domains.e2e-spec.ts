import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../libs/identity/src/users/user.schema.js';
import { JobScheduler } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { cookieValue as valueOf, setCookies } from './support/cookies.js';
import { MailCatcher } from './support/mail-catcher.js';
import { OidcIdp } from './support/oidc-idp.js';
import { SSO_DOMAINS, type SsoDomainView, verifySsoDomains } from './support/sso-domains.js';
import { TestDns } from './support/test-dns.js';

const DAY = 86_400_000;
const INITIATE = '/api/v1/auth/sso/initiate';
const CALLBACK = '/api/v1/auth/sso/callback';
const SSO = '/api/v1/sso/config';

describe('SSO domains proven by DNS', () => {
  let ctx: TestContext;
  let dns: TestDns;
  let mail: MailCatcher;
  let idp: OidcIdp;
  let unavailable: string;
  let counter = 0;

  /** A fresh organization on a plan with sso, with an OIDC configuration listing `domains`. */
  async function ssoOrganization(domains: string[]): Promise<Registered> {
    const owner = await ctx.register({ organizationName: `Domains ${++counter}` });
    await ctx.setPlan(owner.organization.id, 'governance');
    const put = await ctx.request('PUT', SSO, {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: domains,
        oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret },
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    return owner;
  }

  const claims = async (token: string): Promise<SsoDomainView[]> => {
    const res = await ctx.get(SSO_DOMAINS, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as SsoDomainView[];
  };
  const verify = (token: string, domain: string) => ctx.post(`${SSO_DOMAINS}/${domain}/verify`, { token });
  /** Where the dispatcher sends an address: the IdP, or the page that says SSO is unavailable. */
  const dispatch = async (email: string): Promise<string> => {
    const res = await ctx.post(INITIATE, { body: { email } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.redirectUrl as string;
  };
  const routes = async (email: string) => (await dispatch(email)).startsWith(`${idp.issuer}/auth?`);
  const recheck = () => ctx.service(JobScheduler).runNow('sso-domain-recheck');

  beforeAll(async () => {
    dns = await TestDns.start();
    mail = await MailCatcher.start();
    ctx = await TestContext.create({
      config: {
        ssoAllowInsecureHttp: true,
        ssoAllowPrivateNetworks: true,
        ssoDnsServers: [dns.address],
        smtpUrl: mail.url,
      },
    });
    unavailable = `${ctx.config.appUrl}/login?sso=unavailable`;
    idp = await OidcIdp.start({
      redirectUri: `${ctx.config.publicUrl}/api/v1/auth/sso/callback`,
      accounts: {
        stranger: { email: 'someone@pending-only.example', email_verified: true, name: 'Someone' },
      },
    });
  });
  afterAll(async () => {
    await ctx?.close();
    await idp?.close();
    await dns?.stop();
    await mail?.stop();
  });

  it('answers a pending claim with the TXT record to publish, to owners only, on a plan with sso', async () => {
    const owner = await ssoOrganization(['claims-one.example']);
    const created = await ctx.post(SSO_DOMAINS, {
      token: owner.token,
      body: { domain: ' Claims-Two.Example. ' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const claim = created.json().data as SsoDomainView;
    expect(claim).toEqual({
      domain: 'claims-two.example',
      status: 'pending',
      record: { type: 'TXT', name: '_governance-challenge.claims-two.example', value: expect.any(String) },
      verifiedAt: null,
      lastCheckedAt: null,
    });
    expect(claim.record.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Claiming again answers the same claim; the configuration's domain was claimed by its PUT.
    const again = await ctx.post(SSO_DOMAINS, { token: owner.token, body: { domain: 'claims-two.example' } });
    expect(again.json().data.record.value).toBe(claim.record.value);
    expect((await claims(owner.token)).map((c) => [c.domain, c.status])).toEqual([
      ['claims-one.example', 'pending'],
      ['claims-two.example', 'pending'],
    ]);
    const config = (await ctx.get(SSO, { token: owner.token })).json().data;
    expect(config.emailDomains).toEqual(['claims-one.example', 'claims-two.example']);
    expect(config.domains).toEqual([
      { domain: 'claims-one.example', status: 'pending' },
      { domain: 'claims-two.example', status: 'pending' },
    ]);

    const admin = await ctx.addMember(owner.organization.id, 'admin');
    expectErrorEnvelope(await ctx.get(SSO_DOMAINS, { token: admin.token }), 403, 'FORBIDDEN');
    expectErrorEnvelope(
      await ctx.post(SSO_DOMAINS, { token: admin.token, body: { domain: 'admin.example' } }),
      403,
      'FORBIDDEN',
    );
    expectErrorEnvelope(await verify(admin.token, 'claims-two.example'), 403, 'FORBIDDEN');
    const sandbox = await ctx.register({ organizationName: 'No SSO plan' });
    expectErrorEnvelope(
      await ctx.post(SSO_DOMAINS, { token: sandbox.token, body: { domain: 'sandbox.example' } }),
      403,
      'UPGRADE_REQUIRED',
    );
  });

  it('refuses public suffixes and free-mail providers, by the maintained lists, storing nothing', async () => {
    const owner = await ssoOrganization(['suffixes.example']);
    for (const domain of [
      'co.uk',
      'github.io',
      'hotmail.co.uk',
      'outlook.de',
      'yahoo.co.jp',
      'mailinator.com',
    ]) {
      const res = await ctx.post(SSO_DOMAINS, { token: owner.token, body: { domain } });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(res.body, domain).toMatch(/public suffix|public mail provider/);
      expect(body.details).toEqual([{ field: 'domain', message: expect.any(String) }]);
    }
    for (const bad of [{ domain: 'not a domain' }, { domain: 42 }, {}]) {
      expectErrorEnvelope(
        await ctx.post(SSO_DOMAINS, { token: owner.token, body: bad }),
        400,
        'VALIDATION_ERROR',
      );
    }
    // The configuration refuses them as well.
    const put = await ctx.request('PUT', SSO, {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: ['suffixes.example', 'outlook.de'],
        oidc: { issuer: idp.issuer, clientId: idp.clientId },
      },
    });
    expectErrorEnvelope(put, 400, 'VALIDATION_ERROR');
    expect((await claims(owner.token)).map((c) => c.domain)).toEqual(['suffixes.example']);
  });

  it('lets several organizations claim a domain; the first to verify owns it, the other gets 409', async () => {
    const real = await ssoOrganization(['contested.example']);
    const squatter = await ssoOrganization(['contested.example']);
    const [realClaim] = await claims(real.token);
    const [squatterClaim] = await claims(squatter.token);
    expect(realClaim!.record.value).not.toBe(squatterClaim!.record.value);

    // Nothing published yet: 400 naming the record, and nothing routes.
    const missing = expectErrorEnvelope(
      await verify(squatter.token, 'contested.example'),
      400,
      'DOMAIN_NOT_VERIFIED',
    );
    expect(missing.record).toEqual(squatterClaim!.record);
    expect(await dispatch('new.hire@contested.example')).toBe(unavailable);
    // The squatter's own value at the record does not prove the real company's claim, and the other way round.
    dns.setTxt(realClaim!.record.name, 'something else', realClaim!.record.value);
    expectErrorEnvelope(await verify(squatter.token, 'contested.example'), 400, 'DOMAIN_NOT_VERIFIED');
    const won = await verify(real.token, 'contested.example');
    expect(won.statusCode, won.body).toBe(200);
    expect(won.json().data).toMatchObject({ domain: 'contested.example', status: 'verified' });
    expect(Date.parse(won.json().data.verifiedAt as string)).toBe(ctx.clock.nowMs());
    const [entry] = await auditEntriesOf(ctx, real.organization.id, 'sso.domain.verified');
    expect(entry).toMatchObject({ targetType: 'sso_domain', targetId: 'contested.example' });

    // Later the squatter publishes its own value too: the domain is taken.
    dns.setTxt(realClaim!.record.name, realClaim!.record.value, squatterClaim!.record.value);
    expectErrorEnvelope(await verify(squatter.token, 'contested.example'), 409, 'SSO_DOMAIN_TAKEN');
    expect((await claims(squatter.token))[0]!.status).toBe('pending');
    // The real company's IdP gets the domain's sign-ins.
    const url = new URL(await dispatch('new.hire@contested.example'));
    expect(url.href.startsWith(`${idp.issuer}/auth?`)).toBe(true);
    expect(url.searchParams.get('login_hint')).toBe('new.hire@contested.example');
    expectErrorEnvelope(await verify(real.token, 'unclaimed.example'), 404, 'NOT_FOUND');
  });

  it('routes and provisions nothing for a pending domain, even for an organization with a verified one', async () => {
    const owner = await ssoOrganization(['verified-one.example', 'pending-only.example']);
    await verifySsoDomains(ctx, owner.token, dns, ['verified-one.example']);
    expect(await routes('a@verified-one.example')).toBe(true);
    expect(await dispatch('a@pending-only.example')).toBe(unavailable);
    // A sign-in started for the verified domain, whose IdP then asserts an address of the pending one: refused,
    // and no account is made for it.
    const start = await ctx.post(INITIATE, { body: { email: 'a@verified-one.example' } });
    const binding = valueOf(setCookies(start).get('svc_sso_binding'));
    const back = await idp.login(
      start.json().data.redirectUrl,
      'stranger',
      `${ctx.config.publicUrl}${CALLBACK}`,
    );
    const res = await ctx.request('GET', `${CALLBACK}${back.search}`, {
      headers: { cookie: `svc_sso_binding=${encodeURIComponent(binding!)}` },
    });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`${ctx.config.appUrl}/login?error=sso_failed`);
    expect(
      await ctx.db.db.select().from(users).where(eq(users.email, 'someone@pending-only.example')),
    ).toEqual([]);
  });

  it('keeps a verified domain through 7 days without its record, then stops routing and tells the owners', async () => {
    const owner = await ssoOrganization(['fading.example']);
    const [claim] = await verifySsoDomains(ctx, owner.token, dns);
    dns.removeTxt(claim!.record.name);
    // Checked daily: the first check that misses it starts the 7 days of grace, in which it still routes.
    for (let day = 1; day <= 7; day += 1) {
      ctx.clock.advance(DAY + 1000);
      await recheck();
      expect(await routes('x@fading.example'), `day ${day}`).toBe(true);
      expect((await claims(await ctx.login(owner.user.email)))[0]!.status).toBe('verified');
    }
    expect(mail.forRecipient(owner.user.email).filter((m) => /stopped/.test(m.subject))).toEqual([]);
    ctx.clock.advance(DAY + 1000);
    await recheck();
    // Sessions last 7 days: the owner signs in again.
    const token = await ctx.login(owner.user.email);
    const [failing] = await claims(token);
    expect(failing!.status).toBe('failing');
    expect(Date.parse(failing!.lastCheckedAt!)).toBe(ctx.clock.nowMs());
    expect(await dispatch('x@fading.example')).toBe(unavailable);
    const [entry] = await auditEntriesOf(ctx, owner.organization.id, 'sso.domain.failing');
    expect(entry).toMatchObject({ targetId: 'fading.example', actor: { type: 'system' } });
    const notice = await mail.waitFor(owner.user.email, (m) =>
      /Single sign-on stopped for fading\.example/.test(m.subject),
    );
    expect(notice.decoded).toContain('_governance-challenge.fading.example');
    expect((await ctx.get(SSO, { token })).json().data.domains).toEqual([
      { domain: 'fading.example', status: 'failing' },
    ]);

    // The record back: the next check restores it.
    dns.setTxt(claim!.record.name, claim!.record.value);
    ctx.clock.advance(DAY + 1000);
    await recheck();
    expect((await claims(token))[0]!.status).toBe('verified');
    expect(await routes('x@fading.example')).toBe(true);
  });

  it('keeps a domain whose record came back within the grace', async () => {
    const owner = await ssoOrganization(['flaky.example']);
    const [claim] = await verifySsoDomains(ctx, owner.token, dns);
    dns.removeTxt(claim!.record.name);
    for (let day = 1; day <= 5; day += 1) {
      ctx.clock.advance(DAY + 1000);
      await recheck();
    }
    dns.setTxt(claim!.record.name, claim!.record.value);
    ctx.clock.advance(DAY + 1000);
    await recheck();
    dns.removeTxt(claim!.record.name);
    // Missing again: the 7 days count from now, not from the first absence.
    for (let day = 1; day <= 7; day += 1) {
      ctx.clock.advance(DAY + 1000);
      await recheck();
    }
    expect((await claims(await ctx.login(owner.user.email)))[0]!.status).toBe('verified');
    expect(await routes('y@flaky.example')).toBe(true);
  });

  it('drops a claim and its routing with DELETE; a configuration drops only pending claims it no longer lists', async () => {
    const owner = await ssoOrganization(['dropped.example', 'kept.example']);
    await verifySsoDomains(ctx, owner.token, dns);
    expect(await routes('z@dropped.example')).toBe(true);
    const deleted = await ctx.delete(`${SSO_DOMAINS}/dropped.example`, { token: owner.token });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(await dispatch('z@dropped.example')).toBe(unavailable);
    expectErrorEnvelope(
      await ctx.delete(`${SSO_DOMAINS}/dropped.example`, { token: owner.token }),
      404,
      'NOT_FOUND',
    );
    const [removed] = await auditEntriesOf(ctx, owner.organization.id, 'sso.domain.removed');
    expect(removed).toMatchObject({ targetId: 'dropped.example' });

    const put = await ctx.request('PUT', SSO, {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: ['fresh.example'],
        oidc: { issuer: idp.issuer, clientId: idp.clientId },
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    // A proven claim outlives a configuration that no longer lists it (a stale form never undoes a DNS proof);
    // only DELETE /sso/domains drops it. A pending one not listed any more goes.
    expect(put.json().data.domains).toEqual([
      { domain: 'fresh.example', status: 'pending' },
      { domain: 'kept.example', status: 'verified' },
    ]);
    expect(await routes('z@kept.example')).toBe(true);
    const again = await ctx.request('PUT', SSO, {
      token: owner.token,
      body: {
        provider: 'oidc',
        emailDomains: ['other.example'],
        oidc: { issuer: idp.issuer, clientId: idp.clientId },
      },
    });
    expect(again.json().data.domains).toEqual([
      { domain: 'kept.example', status: 'verified' },
      { domain: 'other.example', status: 'pending' },
    ]);
    // Deleting the configuration drops every claim.
    expect((await ctx.delete(SSO, { token: owner.token })).statusCode).toBe(200);
    expect(await claims(owner.token)).toEqual([]);
    expect(await dispatch('z@kept.example')).toBe(unavailable);
  });
});
