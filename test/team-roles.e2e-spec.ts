import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TeamService } from '../libs/identity/src/team/team.service.js';
import { type Actor, AppError } from '#platform';
import { TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { member, MEMBERS, teamHelpers, type TeamMember } from './support/team-suite.js';

const MEMBER_KEYS = [
  'createdAt',
  'email',
  'isActive',
  'joinedAt',
  'lastLoginIp',
  'mfaEnabled',
  'name',
  'role',
  'userId',
].sort();

describe('team members', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  const { team, members, meStatus } = teamHelpers(() => ctx);

  describe('GET /team/members', () => {
    it('lists every member of the caller’s organization with exactly the member fields, to any role', async () => {
      const { owner, others } = await team('admin', 'viewer');
      const outsider = await ctx.register({ organizationName: 'Elsewhere' });
      const viewer = others[1]!;

      const res = await ctx.get(MEMBERS, { token: viewer.token });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.pagination).toEqual({ page: 1, limit: 100, total: 3, totalPages: 1 });
      const list = body.data as TeamMember[];
      expect(list.map((m) => m.userId)).toEqual([owner.user.id, others[0]!.userId, viewer.userId]);
      for (const entry of list) expect(Object.keys(entry).sort()).toEqual(MEMBER_KEYS);
      expect(list[0]).toEqual({
        userId: owner.user.id,
        name: owner.user.name,
        email: owner.user.email,
        role: 'owner',
        joinedAt: expect.any(String),
        isActive: true,
        mfaEnabled: false,
        // Registration is not a login; the members added below logged in.
        lastLoginIp: null,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      });
      expect(list[2]).toMatchObject({
        role: 'viewer',
        isActive: true,
        email: viewer.email,
        lastLoginIp: expect.any(String),
      });
      expect(list.some((m) => m.userId === outsider.user.id)).toBe(false);
      expect(res.body).not.toMatch(/password|hash/i);
    });

    it('pages the list with limit and page', async () => {
      const { owner } = await team('member', 'member', 'viewer');
      const res = await ctx.get(MEMBERS, { token: owner.token, query: { limit: '2', page: '2' } });
      expect(res.statusCode).toBe(200);
      expect(res.json().pagination).toEqual({ page: 2, limit: 2, total: 4, totalPages: 2 });
      expect(res.json().data).toHaveLength(2);
    });

    it('refuses an unauthenticated caller with 401 UNAUTHORIZED', async () => {
      expectErrorEnvelope(await ctx.get(MEMBERS), 401, 'UNAUTHORIZED');
    });
  });

  describe('PATCH /team/members/:userId/role', () => {
    it('changes a member’s role at once and writes team.member.role_changed {from, to}', async () => {
      const { owner, others } = await team('member');
      const target = others[0]!;
      const res = await ctx.patch(`${member(target.userId)}/role`, {
        token: owner.token,
        body: { role: 'admin' },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ userId: target.userId, role: 'admin', isActive: true });
      expect((await meStatus(target.token)).role).toBe('admin');

      const [entry] = await auditEntries(ctx, owner.token, 'team.member.role_changed');
      expect(entry).toMatchObject({
        targetType: 'user',
        targetId: target.userId,
        userId: owner.user.id,
        metadata: { from: 'member', to: 'admin', email: target.email },
      });
    });

    it('refuses a role outside owner, admin, member, viewer (or none) with 400 VALIDATION_ERROR', async () => {
      const { owner, others } = await team('member');
      for (const body of [{ role: 'superuser' }, { role: 'OWNER' }, {}, { role: 7 }]) {
        const res = await ctx.patch(`${member(others[0]!.userId)}/role`, { token: owner.token, body });
        const error = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
        expect(error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'role' })]));
      }
      expect((await meStatus(others[0]!.token)).role).toBe('member');
    });

    it('lets an admin change non-owners but not grant owner or change an owner (403), which an owner may', async () => {
      const { owner, others } = await team('admin', 'member');
      const [admin, plain] = others as [(typeof others)[0], (typeof others)[0]];

      expect(
        (await ctx.patch(`${member(plain.userId)}/role`, { token: admin.token, body: { role: 'viewer' } }))
          .statusCode,
      ).toBe(200);
      expectErrorEnvelope(
        await ctx.patch(`${member(plain.userId)}/role`, { token: admin.token, body: { role: 'owner' } }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(
        await ctx.patch(`${member(owner.user.id)}/role`, { token: admin.token, body: { role: 'member' } }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(
        await ctx.patch(`${member(owner.user.id)}/status`, { token: admin.token }),
        403,
        'FORBIDDEN',
      );
      expectErrorEnvelope(
        await ctx.request('DELETE', member(owner.user.id), { token: admin.token }),
        403,
        'FORBIDDEN',
      );
      expect((await meStatus(owner.token)).role).toBe('owner');

      const promoted = await ctx.patch(`${member(plain.userId)}/role`, {
        token: owner.token,
        body: { role: 'owner' },
      });
      expect(promoted.statusCode, promoted.body).toBe(200);
      expect(promoted.json().data.role).toBe('owner');
      // Several owners are allowed; the new owner may now change the first one.
      const demoted = await ctx.patch(`${member(owner.user.id)}/role`, {
        token: plain.token,
        body: { role: 'admin' },
      });
      expect(demoted.statusCode, demoted.body).toBe(200);
      expect((await meStatus(owner.token)).role).toBe('admin');
    });

    it('refuses members and viewers with 403 FORBIDDEN', async () => {
      const { owner, others } = await team('member', 'viewer');
      for (const caller of others) {
        expectErrorEnvelope(
          await ctx.patch(`${member(owner.user.id)}/role`, { token: caller.token, body: { role: 'viewer' } }),
          403,
          'FORBIDDEN',
        );
      }
    });
  });

  describe('the last active owner', () => {
    it('cannot be demoted, suspended or removed (400 VALIDATION_ERROR), even by themselves', async () => {
      const { owner } = await team('admin');
      const target = member(owner.user.id);
      expectErrorEnvelope(
        await ctx.patch(`${target}/role`, { token: owner.token, body: { role: 'admin' } }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(
        await ctx.patch(`${target}/status`, { token: owner.token }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(
        await ctx.request('DELETE', target, { token: owner.token }),
        400,
        'VALIDATION_ERROR',
      );
      expect((await meStatus(owner.token)).role).toBe('owner');
      expect(await auditEntries(ctx, owner.token, 'team.member.*')).toEqual([]);
    });

    it('counts only active owners: with the other owner suspended, the remaining one is the last', async () => {
      const { owner, others } = await team('owner');
      const second = others[0]!;
      expect((await ctx.patch(`${member(second.userId)}/status`, { token: owner.token })).statusCode).toBe(
        200,
      );
      expectErrorEnvelope(
        await ctx.patch(`${member(owner.user.id)}/role`, { token: owner.token, body: { role: 'member' } }),
        400,
        'VALIDATION_ERROR',
      );
      // A suspended owner may be removed: an active owner remains.
      expect((await ctx.request('DELETE', member(second.userId), { token: owner.token })).statusCode).toBe(
        200,
      );
    });

    it('with a second active owner, an owner may step down', async () => {
      const { owner, others } = await team('owner');
      const res = await ctx.patch(`${member(owner.user.id)}/role`, {
        token: owner.token,
        body: { role: 'member' },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect((await meStatus(owner.token)).role).toBe('member');
      expect((await meStatus(others[0]!.token)).role).toBe('owner');
    });

    it('survives two owners demoting each other at once: exactly one succeeds, one active owner remains', async () => {
      for (let round = 0; round < 4; round += 1) {
        const { owner, others } = await team('owner');
        const second = others[0]!;
        const [a, b] = await Promise.all([
          ctx.patch(`${member(second.userId)}/role`, { token: owner.token, body: { role: 'admin' } }),
          ctx.patch(`${member(owner.user.id)}/role`, { token: second.token, body: { role: 'admin' } }),
        ]);
        const statuses = [a.statusCode, b.statusCode].sort();
        expect(statuses[0], `${a.body} ${b.body}`).toBe(200);
        const loser = a.statusCode === 200 ? b : a;
        // The loser's request either passed the guard before the winner committed (the invariant refuses it) or
        // after (its caller is no longer an owner).
        expect([400, 403]).toContain(loser.statusCode);
        expect(loser.json().code).toBe(loser.statusCode === 400 ? 'VALIDATION_ERROR' : 'FORBIDDEN');

        const winnerToken = a.statusCode === 200 ? owner.token : second.token;
        const owners = (await members(winnerToken)).filter((m) => m.role === 'owner' && m.isActive);
        expect(owners).toHaveLength(1);
        expect(await auditEntries(ctx, winnerToken, 'team.member.role_changed')).toHaveLength(1);
      }
    });

    it('survives the last two owners being suspended at once: exactly one suspension, one active owner', async () => {
      for (let round = 0; round < 4; round += 1) {
        const { owner, others } = await team('owner');
        const second = others[0]!;
        const [a, b] = await Promise.all([
          ctx.patch(`${member(second.userId)}/status`, { token: owner.token, body: { isActive: false } }),
          ctx.patch(`${member(owner.user.id)}/status`, { token: second.token, body: { isActive: false } }),
        ]);
        expect(
          [a.statusCode, b.statusCode].filter((s) => s === 200),
          `${a.body} ${b.body}`,
        ).toHaveLength(1);
        const loser = a.statusCode === 200 ? b : a;
        // Refused by the invariant, or (when its guard ran after the winner committed) as a suspended session.
        expect([400, 401]).toContain(loser.statusCode);
        expect(loser.json().code).toBe(loser.statusCode === 400 ? 'VALIDATION_ERROR' : 'ACCOUNT_DEACTIVATED');
        const winnerToken = a.statusCode === 200 ? owner.token : second.token;
        const owners = (await members(winnerToken)).filter((m) => m.role === 'owner' && m.isActive);
        expect(owners).toHaveLength(1);
      }
    });

    it('serialises concurrent changes that both passed authorisation: the second is 400 VALIDATION_ERROR', async () => {
      // Both calls carry the role the guard saw before either committed, so only the organization lock and the
      // owner count taken under it can stop the second one.
      const service = ctx.app.get(TeamService);
      for (let round = 0; round < 4; round += 1) {
        const { owner, org, others } = await team('owner');
        const second = others[0]!;
        const actorOf = (userId: string, email: string): Actor => ({
          type: 'user',
          credential: 'jwt',
          organizationId: org,
          plan: 'sandbox',
          userId,
          email,
          role: 'owner',
        });
        const meta = { ip: null, userAgent: null };
        const results = await Promise.allSettled([
          service.suspend(actorOf(owner.user.id, owner.user.email), second.userId, meta),
          service.suspend(actorOf(second.userId, second.email), owner.user.id, meta),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(rejected.reason).toBeInstanceOf(AppError);
        expect(rejected.reason).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
      }
    });
  });
});
