import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberships } from '../libs/identity/src/organizations/organization.schema.js';
import { newId } from '#platform';
import { TEST_PASSWORD, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { member, MEMBERS, teamHelpers } from './support/team-suite.js';

describe('team members', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  const { team, members, meStatus } = teamHelpers(() => ctx);

  describe('suspension and reactivation', () => {
    it('suspends a member: open JWTs get 401 ACCOUNT_DEACTIVATED, login fails; reactivation restores the same role', async () => {
      const { owner, others } = await team('admin');
      const target = others[0]!;
      // `isActive` may be left out, but not sent as null (the fuzzer found null suspending the member).
      expectErrorEnvelope(
        await ctx.patch(`${member(target.userId)}/status`, { token: owner.token, body: { isActive: null } }),
        400,
        'VALIDATION_ERROR',
      );
      expect((await ctx.get('/api/v1/auth/me', { token: target.token })).statusCode).toBe(200);
      const suspended = await ctx.patch(`${member(target.userId)}/status`, {
        token: owner.token,
        body: { isActive: false },
      });
      expect(suspended.statusCode, suspended.body).toBe(200);
      expect(suspended.json().data).toMatchObject({ userId: target.userId, role: 'admin', isActive: false });

      expectErrorEnvelope(
        await ctx.get('/api/v1/auth/me', { token: target.token }),
        401,
        'ACCOUNT_DEACTIVATED',
      );
      expectErrorEnvelope(await ctx.get(MEMBERS, { token: target.token }), 401, 'ACCOUNT_DEACTIVATED');
      expectErrorEnvelope(
        await ctx.post('/api/v1/auth/login', { body: { email: target.email, password: TEST_PASSWORD } }),
        401,
        'ACCOUNT_DEACTIVATED',
      );
      const listed = (await members(owner.token)).find((m) => m.userId === target.userId);
      expect(listed).toMatchObject({ isActive: false, role: 'admin' });

      const reactivated = await ctx.patch(`${member(target.userId)}/reactivate`, { token: owner.token });
      expect(reactivated.statusCode, reactivated.body).toBe(200);
      expect(reactivated.json().data).toMatchObject({ userId: target.userId, role: 'admin', isActive: true });
      expect(await meStatus(target.token)).toMatchObject({ status: 200, role: 'admin' });
      const fresh = await ctx.login(target.email);
      expect(await meStatus(fresh)).toMatchObject({ status: 200, role: 'admin' });
      expect((await members(owner.token)).filter((m) => m.userId === target.userId)).toHaveLength(1);

      const [suspendEntry] = await auditEntries(ctx, owner.token, 'team.member.suspended');
      expect(suspendEntry).toMatchObject({
        targetId: target.userId,
        userId: owner.user.id,
        metadata: { role: 'admin' },
      });
      const [reactivateEntry] = await auditEntries(ctx, owner.token, 'team.member.reactivated');
      expect(reactivateEntry).toMatchObject({ targetId: target.userId, metadata: { role: 'admin' } });
    });

    it('accepts the suspend route without a body, and refuses {isActive: true} with 400 VALIDATION_ERROR', async () => {
      const { owner, others } = await team('member');
      const target = member(others[0]!.userId);
      expectErrorEnvelope(
        await ctx.patch(`${target}/status`, { token: owner.token, body: { isActive: true } }),
        400,
        'VALIDATION_ERROR',
      );
      expect((await meStatus(others[0]!.token)).status).toBe(200);
      const res = await ctx.patch(`${target}/status`, { token: owner.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.isActive).toBe(false);
      // Suspending again changes nothing and writes no second entry.
      expect((await ctx.patch(`${target}/status`, { token: owner.token })).statusCode).toBe(200);
      expect(await auditEntries(ctx, owner.token, 'team.member.suspended')).toHaveLength(1);
    });

    it('lets only an owner suspend or reactivate an owner', async () => {
      const { owner, others } = await team('owner', 'admin');
      const [second, admin] = others as [(typeof others)[0], (typeof others)[0]];
      expectErrorEnvelope(
        await ctx.patch(`${member(second.userId)}/status`, { token: admin.token }),
        403,
        'FORBIDDEN',
      );
      expect((await ctx.patch(`${member(second.userId)}/status`, { token: owner.token })).statusCode).toBe(
        200,
      );
      expectErrorEnvelope(
        await ctx.patch(`${member(second.userId)}/reactivate`, { token: admin.token }),
        403,
        'FORBIDDEN',
      );
      expect(
        (await ctx.patch(`${member(second.userId)}/reactivate`, { token: owner.token })).statusCode,
      ).toBe(200);
    });
  });

  describe('DELETE /team/members/:userId', () => {
    it('removes the membership, keeps the user (who still logs in to another organization)', async () => {
      const { owner, others } = await team('member');
      const target = others[0]!;
      // The same user also belongs to a second organization (joined later).
      const elsewhere = await ctx.register({ organizationName: 'Second Home' });
      const now = ctx.clock.now();
      await ctx.db.db.insert(memberships).values({
        id: newId(),
        organizationId: elsewhere.organization.id,
        userId: target.userId,
        role: 'viewer',
        isActive: true,
        createdAt: new Date(now.getTime() + 1000),
        updatedAt: now,
      });

      const res = await ctx.request('DELETE', member(target.userId), { token: owner.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true, data: { id: target.userId, deleted: true } });
      expect((await members(owner.token)).some((m) => m.userId === target.userId)).toBe(false);
      expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token: target.token }), 401, 'UNAUTHORIZED');

      const login = await ctx.post('/api/v1/auth/login', {
        body: { email: target.email, password: TEST_PASSWORD },
      });
      expect(login.statusCode, login.body).toBe(200);
      const me = await ctx.get('/api/v1/auth/me', { token: login.json().data.token });
      expect(me.json().data.organization.id).toBe(elsewhere.organization.id);

      const [entry] = await auditEntries(ctx, owner.token, 'team.member.removed');
      expect(entry).toMatchObject({
        targetType: 'user',
        targetId: target.userId,
        metadata: { role: 'member', email: target.email },
      });
      expectErrorEnvelope(
        await ctx.request('DELETE', member(target.userId), { token: owner.token }),
        404,
        'NOT_FOUND',
      );
    });

    it('makes login fail with ACCOUNT_DEACTIVATED when it was the user’s only organization', async () => {
      const { owner, others } = await team('viewer');
      const target = others[0]!;
      expect((await ctx.request('DELETE', member(target.userId), { token: owner.token })).statusCode).toBe(
        200,
      );
      expectErrorEnvelope(
        await ctx.post('/api/v1/auth/login', { body: { email: target.email, password: TEST_PASSWORD } }),
        401,
        'ACCOUNT_DEACTIVATED',
      );
    });

    it('lets an owner remove another owner while one active owner remains', async () => {
      const { owner, others } = await team('owner');
      expect(
        (await ctx.request('DELETE', member(others[0]!.userId), { token: owner.token })).statusCode,
      ).toBe(200);
      expect((await members(owner.token)).map((m) => m.role)).toEqual(['owner']);
    });
  });

  describe('scoping', () => {
    it('answers 404 NOT_FOUND for a user of another organization, an unknown id and a malformed id', async () => {
      const { owner } = await team();
      const other = await team('member');
      const foreign = other.others[0]!.userId;
      for (const userId of [foreign, other.owner.user.id, 'f'.repeat(24), 'not-an-id']) {
        expectErrorEnvelope(
          await ctx.patch(`${member(userId)}/role`, { token: owner.token, body: { role: 'viewer' } }),
          404,
          'NOT_FOUND',
        );
        expectErrorEnvelope(
          await ctx.patch(`${member(userId)}/status`, { token: owner.token }),
          404,
          'NOT_FOUND',
        );
        expectErrorEnvelope(
          await ctx.patch(`${member(userId)}/reactivate`, { token: owner.token }),
          404,
          'NOT_FOUND',
        );
        expectErrorEnvelope(
          await ctx.request('DELETE', member(userId), { token: owner.token }),
          404,
          'NOT_FOUND',
        );
      }
      // Nothing changed in the other organization.
      const untouched = await members(other.owner.token);
      expect(untouched.every((m) => m.isActive)).toBe(true);
      expect(untouched.map((m) => m.role)).toEqual(['owner', 'member']);
    });
  });
});
