import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { expectScimError, SCIM, SCIM_TOKEN_API, scimClient, scimOrganization } from './support/scim.js';
import { scimSuite } from './support/scim-suite.js';

/*
 * The SCIM token (test/support/scim.ts: scimOrganization): shown once and kept as a hash, rotated and revoked, for
 * owners and admins on a plan with SCIM; the SCIM 401 of a missing or unknown bearer; and the per-token and per-address
 * rate limits with Retry-After.
 */

describe('SCIM 2.0', () => {
  const s = scimSuite({ organizations: ['SCIM Org'], freshWindows: true });

  describe('the token', () => {
    it('is shown once, kept as a hash, replaced at once by a new one, and revoked', async () => {
      const { ctx } = s;
      const org = await ctx.register({ organizationName: 'Token org' });
      await ctx.setPlan(org.organization.id, 'enterprise');
      const status = async () => (await ctx.get(SCIM_TOKEN_API, { token: org.token })).json().data;
      expect(await status()).toEqual({ exists: false, createdAt: null, lastUsedAt: null });

      const first = await ctx.post(SCIM_TOKEN_API, { token: org.token });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().data).toEqual({
        token: expect.stringMatching(/^scim_[0-9a-f]{48}$/),
        createdAt: expect.any(String),
      });
      const firstToken = first.json().data.token as string;
      const firstClient = scimClient(ctx, () => firstToken);
      expect((await firstClient.get('/Users')).statusCode).toBe(200);
      expect(await status()).toEqual({
        exists: true,
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
      });
      expect(JSON.stringify(await status())).not.toContain(firstToken);

      const second = (await ctx.post(SCIM_TOKEN_API, { token: org.token })).json().data.token as string;
      expect(second).not.toBe(firstToken);
      expectScimError(await firstClient.get('/Users'), 401);
      expect((await scimClient(ctx, () => second).get('/Users')).statusCode).toBe(200);

      const revoked = await ctx.delete(SCIM_TOKEN_API, { token: org.token });
      expect(revoked.json().data).toEqual({ deleted: true });
      expectScimError(await scimClient(ctx, () => second).get('/Users'), 401);
      expect((await ctx.delete(SCIM_TOKEN_API, { token: org.token })).json().data).toEqual({
        deleted: false,
      });
      const [created] = await auditEntriesOf(ctx, org.organization.id, 'scim.token.created');
      expect(JSON.stringify(created)).not.toContain(firstToken);
      expect((await auditEntriesOf(ctx, org.organization.id, 'scim.token.revoked')).length).toBe(1);
    });

    it('is for owners and admins on a plan with scim; a downgraded plan stops the token', async () => {
      const { ctx, owner } = s;
      const member = await ctx.addMember(owner.organization.id, 'member');
      expectErrorEnvelope(await ctx.post(SCIM_TOKEN_API, { token: member.token }), 403, 'FORBIDDEN');
      const admin = await ctx.addMember(owner.organization.id, 'admin');
      expect((await ctx.get(SCIM_TOKEN_API, { token: admin.token })).statusCode).toBe(200);
      const team = await ctx.register({ organizationName: 'Governance plan' });
      await ctx.setPlan(team.organization.id, 'governance');
      expectErrorEnvelope(await ctx.post(SCIM_TOKEN_API, { token: team.token }), 403, 'UPGRADE_REQUIRED');

      const downgraded = await scimOrganization(ctx, 'Downgraded');
      await ctx.setPlan(downgraded.owner.organization.id, 'governance');
      expectScimError(await downgraded.client.get('/Users'), 403);
    });

    it('refuses a missing, malformed or unknown bearer with a SCIM 401', async () => {
      const { ctx, owner } = s;
      for (const authorization of [
        undefined,
        'Basic abc',
        'Bearer ',
        `Bearer scim_${'0'.repeat(48)}`,
        `Bearer ${owner.token}`,
      ]) {
        const res = await ctx.request('GET', `${SCIM}/Users`, {
          headers: authorization ? { authorization } : {},
        });
        expectScimError(res, 401);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      }
    });
  });

  describe('limits', () => {
    // 600 per 15 minutes is the default (libs/platform/src/config/app-config.spec.ts); a smaller window here shows
    // the mechanism with fewer requests: per token and per IP address, both applied, with Retry-After.
    const MAX = 40;
    let limited: TestContext;
    beforeAll(async () => {
      limited = await TestContext.create({
        config: { scimRateLimit: { max: MAX, windowMs: 15 * 60_000 } },
      });
    });
    afterAll(async () => {
      await limited?.close();
    });
    /** A SCIM list from an address. */
    const inject = (t: string, ip: string) =>
      limited.app.inject({
        method: 'GET',
        url: `${SCIM}/Users?count=0`,
        remoteAddress: ip,
        headers: { authorization: `Bearer ${t}` },
      });

    it('counts per token and per IP address, both applied, with Retry-After', async () => {
      const a = await scimOrganization(limited, 'Limit A');
      const b = await scimOrganization(limited, 'Limit B');
      limited.clock.advance(15 * 60_000 + 1);
      // One token from many addresses: the token's window ends it.
      for (let i = 0; i < MAX; i++) expect((await inject(a.token, `10.0.0.${i + 1}`)).statusCode).toBe(200);
      const byToken = await inject(a.token, '10.9.9.9');
      expectScimError(byToken, 429);
      expect(Number(byToken.headers['retry-after'])).toBeGreaterThan(0);
      expect((await inject(b.token, '10.9.9.9')).statusCode).toBe(200);
      // One address with two tokens: the address's window ends it, and another address goes on.
      limited.clock.advance(15 * 60_000 + 1);
      for (let i = 0; i < MAX / 2; i++) expect((await inject(a.token, '10.1.1.1')).statusCode).toBe(200);
      for (let i = 0; i < MAX / 2; i++) expect((await inject(b.token, '10.1.1.1')).statusCode).toBe(200);
      expectScimError(await inject(b.token, '10.1.1.1'), 429);
      expect((await inject(b.token, '10.1.1.2')).statusCode).toBe(200);
      // Guessing tokens counts against the address too.
      limited.clock.advance(15 * 60_000 + 1);
      for (let i = 0; i < MAX; i++)
        expect((await inject(`scim_${'1'.repeat(48)}`, '10.2.2.2')).statusCode).toBe(401);
      expectScimError(await inject(a.token, '10.2.2.2'), 429);
      // A new window lets them through again.
      limited.clock.advance(15 * 60_000 + 1);
      expect((await inject(a.token, '10.2.2.2')).statusCode).toBe(200);
    });

    it('shows the tighter of the two windows in RateLimit headers, on answers and on refusals', async () => {
      const a = await scimOrganization(limited, 'Headers A');
      const b = await scimOrganization(limited, 'Headers B');
      const shown = (res: { headers: Record<string, unknown> }) => ({
        limit: Number(res.headers['ratelimit-limit']),
        remaining: Number(res.headers['ratelimit-remaining']),
        reset: Number(res.headers['ratelimit-reset']),
      });
      limited.clock.advance(15 * 60_000 + 1);
      // Token a from fresh addresses: its own window is the tighter one.
      for (let i = 0; i < 5; i++) {
        const res = await inject(a.token, `10.3.0.${i + 1}`);
        expect(res.statusCode).toBe(200);
        expect(shown(res)).toMatchObject({ limit: MAX, remaining: MAX - 1 - i });
        expect(shown(res).reset).toBeGreaterThan(0);
      }
      // Token b, fresh, from an address that has spent 10 already: the address's window is the tighter one.
      for (let i = 0; i < 10; i++)
        expect((await inject(`scim_${'2'.repeat(48)}`, '10.4.0.1')).statusCode).toBe(401);
      const fromBusyAddress = await inject(b.token, '10.4.0.1');
      expect(fromBusyAddress.statusCode).toBe(200);
      expect(shown(fromBusyAddress)).toMatchObject({ limit: MAX, remaining: MAX - 11 });
      // A refused token (no token at all) shows the address's window; so does the 429 that ends it.
      const noToken = await limited.app.inject({
        method: 'GET',
        url: `${SCIM}/Users`,
        remoteAddress: '10.4.0.1',
      });
      expectScimError(noToken, 401);
      expect(shown(noToken)).toMatchObject({ limit: MAX, remaining: MAX - 12 });
      for (let i = 0; i < MAX - 12; i++) await inject(b.token, '10.4.0.1');
      const refused = await inject(b.token, '10.4.0.1');
      expectScimError(refused, 429);
      expect(shown(refused)).toMatchObject({ limit: MAX, remaining: 0 });
      expect(shown(refused).reset).toBe(Number(refused.headers['retry-after']));
    });
  });
});
