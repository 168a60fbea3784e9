import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { createFria, expectedHash, FRIA, friaIn, friaOrganization, move } from './support/fria-suite.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { eventsOf } from './support/review-suite.js';

const STATES = ['draft', 'review', 'approved', 'archived'];
// The only allowed moves (docs/compliance-officers.md, "Fundamental-rights impact assessments (FRIA)").
const ALLOWED = new Set([
  'draft>review',
  'draft>archived',
  'review>approved',
  'review>draft',
  'review>archived',
  'approved>draft',
  'approved>archived',
]);

describe('FRIA lifecycle', () => {
  let ctx: TestContext;
  let org: Awaited<ReturnType<typeof friaOrganization>>;
  let owner: Registered;

  beforeAll(async () => {
    ctx = await TestContext.create();
    org = await friaOrganization(ctx, 'Fria lifecycle');
    owner = org.owner;
  });
  afterAll(() => ctx.close());

  describe('all 16 moves through /transition', () => {
    for (const from of STATES) {
      for (const to of STATES) {
        const ok = ALLOWED.has(`${from}>${to}`);
        it(`${from} → ${to} is ${ok ? 'allowed' : 'refused'}`, async () => {
          const fria = await friaIn(ctx, owner.token, from);
          const res = await move(ctx, owner.token, fria.id, to);
          if (ok) {
            expect(res.statusCode).toBe(200);
            expect(res.json().data.status).toBe(to);
          } else {
            expectErrorEnvelope(res, 400, 'FRIA_TRANSITION_FAILED');
            const after = await ctx.get(`${FRIA}/${fria.id}`, { token: owner.token });
            expect(after.json().data.status).toBe(from);
          }
        });
      }
    }
  });

  it('requires a known status', async () => {
    const fria = await friaIn(ctx, owner.token, 'draft');
    expectErrorEnvelope(
      await ctx.post(`${FRIA}/${fria.id}/transition`, { token: owner.token, body: {} }),
      400,
      'VALIDATION_ERROR',
    );
    expectErrorEnvelope(await move(ctx, owner.token, fria.id, 'published'), 400, 'VALIDATION_ERROR');
  });

  it('submit and approve aliases move to review and approved, and refuse other starts', async () => {
    const fria = await friaIn(ctx, owner.token, 'draft');
    expectErrorEnvelope(
      await ctx.post(`${FRIA}/${fria.id}/approve`, { token: org.admin.token }),
      400,
      'FRIA_TRANSITION_FAILED',
    );
    const submitted = await ctx.post(`${FRIA}/${fria.id}/submit`, { token: org.member.token });
    expect(submitted.statusCode).toBe(200);
    expect(submitted.json().data.status).toBe('review');
    expectErrorEnvelope(
      await ctx.post(`${FRIA}/${fria.id}/submit`, { token: owner.token }),
      400,
      'FRIA_TRANSITION_FAILED',
    );
    const approved = await ctx.post(`${FRIA}/${fria.id}/approve`, { token: org.admin.token });
    expect(approved.statusCode).toBe(200);
    expect(approved.json().data).toMatchObject({ status: 'approved', approvedBy: org.admin.userId });
  });

  it('a member cannot approve by either route; a viewer cannot move', async () => {
    const fria = await friaIn(ctx, owner.token, 'review');
    expectErrorEnvelope(await move(ctx, org.member.token, fria.id, 'approved'), 403, 'FORBIDDEN');
    expectErrorEnvelope(
      await ctx.post(`${FRIA}/${fria.id}/approve`, { token: org.member.token }),
      403,
      'FORBIDDEN',
    );
    expectErrorEnvelope(await move(ctx, org.viewer.token, fria.id, 'draft'), 403, 'FORBIDDEN');
    const after = await ctx.get(`${FRIA}/${fria.id}`, { token: owner.token });
    expect(after.json().data.status).toBe('review');
    // A member may still send it back to draft.
    expect((await move(ctx, org.member.token, fria.id, 'draft')).statusCode).toBe(200);
  });

  it('anchors on submit, keeps the anchor over edits in review, re-anchors on approval and re-submit', async () => {
    const contents = { systemName: 'Hiring screen', purpose: 'Shortlisting' };
    const fria = await createFria(ctx, owner.token, contents);
    expect(fria.chainHash).toBeNull();
    const submitted = (await move(ctx, owner.token, fria.id, 'review')).json().data;
    const h1 = expectedHash(contents);
    expect(submitted.chainHash).toBe(h1);

    const edited = await ctx.patch(`${FRIA}/${fria.id}`, {
      token: owner.token,
      body: { usageContext: 'EU offices' },
    });
    expect(edited.statusCode).toBe(200);
    expect(edited.json().data.chainHash).toBe(h1);

    const approved = (await move(ctx, owner.token, fria.id, 'approved')).json().data;
    const h2 = expectedHash({ ...contents, usageContext: 'EU offices' });
    expect(h2).not.toBe(h1);
    expect(approved).toMatchObject({ chainHash: h2, approvedBy: owner.user.id });
    expect(approved.approvedAt).toBe(ctx.clock.now().toISOString());

    // approved → draft keeps the last anchor until the next submit.
    const back = (await move(ctx, owner.token, fria.id, 'draft')).json().data;
    expect(back.chainHash).toBe(h2);
    await ctx.patch(`${FRIA}/${fria.id}`, { token: owner.token, body: { purpose: 'Ranking' } });
    const h3 = expectedHash({ ...contents, usageContext: 'EU offices', purpose: 'Ranking' });
    expect((await move(ctx, owner.token, fria.id, 'review')).json().data.chainHash).toBe(h3);
    expect((await move(ctx, owner.token, fria.id, 'approved')).json().data.chainHash).toBe(h3);
  });

  it('audits each change and publishes fria.approved on approval only', async () => {
    const fria = await createFria(ctx, owner.token, { systemName: 'Audited' });
    await ctx.patch(`${FRIA}/${fria.id}`, {
      token: owner.token,
      body: { purpose: 'x', complaintsMechanism: 'y' },
    });
    await move(ctx, owner.token, fria.id, 'review');
    expect(
      (await eventsOf(ctx, org.organizationId, 'fria.approved')).filter(
        (e) => (e.data as { id: string }).id === fria.id,
      ),
    ).toHaveLength(0);
    const approved = (await move(ctx, org.admin.token, fria.id, 'approved')).json().data;

    expect(await auditEntriesOf(ctx, org.organizationId, 'fria.create', fria.id)).toHaveLength(1);
    const [update] = await auditEntriesOf(ctx, org.organizationId, 'fria.update', fria.id);
    expect(update!.metadata).toEqual({ changed: ['purpose', 'complaintsMechanism'] });
    const moves = await auditEntriesOf(ctx, org.organizationId, 'fria.transition', fria.id);
    expect(moves.map((m) => m.metadata)).toEqual(
      expect.arrayContaining([
        {
          from: 'draft',
          to: 'review',
          chainHash: expectedHash({ systemName: 'Audited', purpose: 'x', complaintsMechanism: 'y' }),
        },
        { from: 'review', to: 'approved', chainHash: approved.chainHash },
      ]),
    );
    const events = (await eventsOf(ctx, org.organizationId, 'fria.approved')).filter(
      (e) => (e.data as { id: string }).id === fria.id,
    );
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toEqual({
      id: fria.id,
      systemName: 'Audited',
      chainHash: approved.chainHash,
      approvedBy: org.admin.userId,
      approvedAt: approved.approvedAt,
    });
  });

  it('refuses PATCH on approved and archived with 409 CONFLICT, unchanged', async () => {
    for (const status of ['approved', 'archived']) {
      const fria = await friaIn(ctx, owner.token, status, `Locked ${status}`);
      const res = await ctx.patch(`${FRIA}/${fria.id}`, { token: owner.token, body: { purpose: 'late' } });
      expectErrorEnvelope(res, 409, 'CONFLICT');
      const after = await ctx.get(`${FRIA}/${fria.id}`, { token: owner.token });
      expect(after.json().data.purpose).toBeNull();
    }
  });

  it('deletes only a draft never submitted; others are 404', async () => {
    const fresh = await friaIn(ctx, owner.token, 'draft', 'Scratch');
    const res = await ctx.request('DELETE', `${FRIA}/${fresh.id}`, { token: org.member.token });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: fresh.id, deleted: true });
    const [entry] = await auditEntriesOf(ctx, org.organizationId, 'fria.delete', fresh.id);
    expect(entry!.metadata).toEqual({ systemName: 'Scratch' });
    expectErrorEnvelope(await ctx.get(`${FRIA}/${fresh.id}`, { token: owner.token }), 404, 'NOT_FOUND');

    // Submitted once, then back to draft: no longer deletable.
    const returned = await friaIn(ctx, owner.token, 'review', 'Returned');
    await move(ctx, owner.token, returned.id, 'draft');
    for (const status of ['review', 'approved', 'archived']) {
      const other = await friaIn(ctx, owner.token, status);
      expectErrorEnvelope(
        await ctx.request('DELETE', `${FRIA}/${other.id}`, { token: owner.token }),
        404,
        'NOT_FOUND',
      );
    }
    expectErrorEnvelope(
      await ctx.request('DELETE', `${FRIA}/${returned.id}`, { token: owner.token }),
      404,
      'NOT_FOUND',
    );
    expect((await ctx.get(`${FRIA}/${returned.id}`, { token: owner.token })).json().data.status).toBe(
      'draft',
    );
    expectErrorEnvelope(
      await ctx.request('DELETE', `${FRIA}/${fresh.id}`, { token: org.viewer.token }),
      403,
      'FORBIDDEN',
    );
  });

  it('of two simultaneous approvals exactly one applies and one event is published', async () => {
    const fria = await friaIn(ctx, owner.token, 'review', 'Raced');
    const results = await Promise.all([
      move(ctx, owner.token, fria.id, 'approved'),
      ctx.post(`${FRIA}/${fria.id}/approve`, { token: org.admin.token }),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
    expectErrorEnvelope(
      results.find((r) => r.statusCode === 400)!,
      400,
      'FRIA_TRANSITION_FAILED',
    );
    const events = (await eventsOf(ctx, org.organizationId, 'fria.approved')).filter(
      (e) => (e.data as { id: string }).id === fria.id,
    );
    expect(events).toHaveLength(1);
    expect(await auditEntriesOf(ctx, org.organizationId, 'fria.transition', fria.id)).toHaveLength(2);
  });
  it('shows the audit history oldest first to every role, without ip or user agent', async () => {
    const fria = await createFria(ctx, org.member.token, { systemName: 'Historied' });
    await ctx.patch(`${FRIA}/${fria.id}`, { token: owner.token, body: { purpose: 'p' } });
    await move(ctx, owner.token, fria.id, 'review');
    await ctx.post(`${FRIA}/${fria.id}/approve`, { token: org.admin.token });

    const res = await ctx.get(`${FRIA}/${fria.id}/history`, { token: org.viewer.token });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.pagination).toMatchObject({ page: 1, limit: 50, total: 4 });
    const entries = body.data as Record<string, unknown>[];
    expect(entries.map((e) => e.eventType)).toEqual([
      'fria.create',
      'fria.update',
      'fria.transition',
      'fria.transition',
    ]);
    const sequences = entries.map((e) => e.sequence as number);
    expect([...sequences].sort((x, y) => x - y)).toEqual(sequences);
    expect(entries[0]!.actor).toEqual({ type: 'user', id: org.member.userId, email: org.member.email });
    expect(entries[1]!.metadata).toEqual({ changed: ['purpose'] });
    expect(entries[3]!.actor).toMatchObject({ id: org.admin.userId });
    expect(Object.keys(entries[0]!).sort()).toEqual([
      'actor',
      'createdAt',
      'eventType',
      'hash',
      'id',
      'metadata',
      'sequence',
    ]);
    const [stored] = await auditEntriesOf(ctx, org.organizationId, 'fria.create', fria.id);
    expect(entries[0]).toMatchObject({ id: stored!.id, hash: stored!.hash });

    const second = (
      await ctx.get(`${FRIA}/${fria.id}/history`, { token: owner.token, query: { limit: '1', page: '2' } })
    ).json();
    expect(second.data.map((e: { eventType: string }) => e.eventType)).toEqual(['fria.update']);
    const capped = (
      await ctx.get(`${FRIA}/${fria.id}/history`, { token: owner.token, query: { limit: '5000' } })
    ).json();
    expect(capped.pagination.limit).toBe(200);
    const stranger = await friaOrganization(ctx, 'Fria history stranger');
    expectErrorEnvelope(
      await ctx.get(`${FRIA}/${fria.id}/history`, { token: stranger.owner.token }),
      404,
      'NOT_FOUND',
    );
  });
});
