import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { users } from '../libs/identity/src/users/user.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import {
  CATALOGUE,
  CROSSWALK,
  governanceOrg,
  MAPPING,
  notesOf,
  patchMapping,
} from './support/compliance-suite.js';
import { eventsOf } from './support/review-suite.js';

describe('compliance mapping', () => {
  let ctx: TestContext;
  let owner: Registered;
  let member: { token: string };
  let viewer: { token: string };
  let free: Registered;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await governanceOrg(ctx, 'Mapping owners');
    member = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    free = await ctx.register({ organizationName: 'Mapping free' });
    await ctx.setPlan(free.organization.id, 'sandbox');
  });
  afterAll(async () => ctx?.close());

  const patch = (token: string, body: Record<string, unknown>) => patchMapping(ctx, token, body);

  describe('catalogues', () => {
    it.each([
      ['iso-42001', 18],
      ['eu-ai-act', 15],
      ['nist-rmf', 19],
    ])('%s has %i clauses, each a gap by default', async (framework, size) => {
      const res = await ctx.get(CATALOGUE, { token: viewer.token, query: { framework } });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      expect(data.framework).toBe(framework);
      expect(data.totalClauses).toBe(size);
      expect(data.clauses).toHaveLength(size);
      for (const c of data.clauses) {
        expect(Object.keys(c).sort()).toEqual(['clauseId', 'defaultStatus', 'guidance', 'title']);
        expect(c.defaultStatus).toBe('gap');
      }
    });

    it('defaults to iso-42001 with its impact-assessment clauses and Annex A groups', async () => {
      const res = await ctx.get(CATALOGUE, { token: member.token });
      const data = res.json().data;
      expect(data.framework).toBe('iso-42001');
      expect(data.clauses.map((c: { clauseId: string }) => c.clauseId)).toEqual(
        expect.arrayContaining(['4', '10', '6.1.4', '8.4', 'A.2', 'A.10']),
      );
    });

    it('refuses an unknown framework with 400', async () => {
      const res = await ctx.get(CATALOGUE, { token: owner.token, query: { framework: 'iso-27001' } });
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      const mapping = await ctx.get(MAPPING, { token: owner.token, query: { framework: 'x' } });
      expectErrorEnvelope(mapping, 400, 'VALIDATION_ERROR');
    });
  });

  describe('access', () => {
    it('refuses a plan without complianceMapping with 403 UPGRADE_REQUIRED on every route', async () => {
      expectErrorEnvelope(await ctx.get(CATALOGUE, { token: free.token }), 403, 'UPGRADE_REQUIRED');
      expectErrorEnvelope(await ctx.get(MAPPING, { token: free.token }), 403, 'UPGRADE_REQUIRED');
      const res = await patch(free.token, { framework: 'iso-42001', clauseId: '4', status: 'covered' });
      expectErrorEnvelope(res, 403, 'UPGRADE_REQUIRED');
      expect(await notesOf(ctx, free.organization.id)).toEqual([]);
    });

    it('lets members and viewers read but not write', async () => {
      const org = await governanceOrg(ctx, 'Roles');
      const m = await ctx.addMember(org.organization.id, 'member');
      const v = await ctx.addMember(org.organization.id, 'viewer');
      for (const token of [m.token, v.token]) {
        expect((await ctx.get(MAPPING, { token })).statusCode).toBe(200);
        const res = await patch(token, { framework: 'iso-42001', clauseId: '4', status: 'covered' });
        expectErrorEnvelope(res, 403, 'FORBIDDEN');
      }
      expect(await notesOf(ctx, org.organization.id)).toEqual([]);
    });

    it('needs a token', async () => {
      expect((await ctx.get(MAPPING)).statusCode).toBe(401);
      expect((await ctx.patch(MAPPING, { body: { framework: 'iso-42001', clauseId: '4' } })).statusCode).toBe(
        401,
      );
    });
  });

  describe('PATCH', () => {
    it('creates a note with the reviewer stamp, audits it and publishes the event with the coverage', async () => {
      const org = await governanceOrg(ctx, 'Stamps');
      const now = ctx.clock.now().toISOString();
      const res = await patch(org.token, {
        framework: 'eu-ai-act',
        clauseId: 'art-14',
        status: 'partial',
        evidence: 'Review queue with escalation',
      });
      expect(res.statusCode, res.body).toBe(200);
      const { note, coverage } = res.json().data;
      expect(note).toEqual({
        clauseId: 'art-14',
        status: 'partial',
        evidence: 'Review queue with escalation',
        evidenceRefs: [],
        reviewedAt: now,
        reviewedBy: org.user.id,
        reviewedByEmail: org.user.email,
      });
      // eu-ai-act has 15 clauses: 1 partial, 14 gaps → 0.5 / 15 = 3.33… → 3.3
      const expected = { covered: 0, partial: 1, gap: 14, notApplicable: 0, total: 15, percent: 3.3 };
      expect(coverage).toEqual(expected);

      const [stored] = await notesOf(ctx, org.organization.id);
      const audit = await auditEntriesOf(ctx, org.organization.id, 'compliance.mapping.updated');
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        userId: org.user.id,
        targetType: 'compliance_mapping_note',
        targetId: stored!.id,
      });
      expect(audit[0]!.metadata).toEqual({
        framework: 'eu-ai-act',
        clauseId: 'art-14',
        status: 'partial',
        evidenceLength: 'Review queue with escalation'.length,
        evidenceExcerpt: 'Review queue with escalation',
        evidenceRefs: [],
      });
      const events = await eventsOf(ctx, org.organization.id, 'compliance.mapping.updated');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toEqual({
        framework: 'eu-ai-act',
        clauseId: 'art-14',
        status: 'partial',
        coverage: expected,
      });
    });

    it('makes a first write without status a gap, and keeps omitted fields on later writes', async () => {
      const org = await governanceOrg(ctx, 'Partial writes');
      const first = await patch(org.token, { framework: 'nist-rmf', clauseId: 'MAP-5', evidence: 'Draft' });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().data.note).toMatchObject({ status: 'gap', evidence: 'Draft' });

      const second = await patch(org.token, { framework: 'nist-rmf', clauseId: 'MAP-5', status: 'covered' });
      expect(second.json().data.note).toMatchObject({ status: 'covered', evidence: 'Draft' });
      const third = await patch(org.token, { framework: 'nist-rmf', clauseId: 'MAP-5', evidence: 'Final' });
      expect(third.json().data.note).toMatchObject({ status: 'covered', evidence: 'Final' });
      expect(await notesOf(ctx, org.organization.id)).toHaveLength(1);
    });

    it('keeps the reviewer e-mail it copied when the user changes theirs; the next write copies the new one', async () => {
      const org = await governanceOrg(ctx, 'E-mail copies');
      const admin = await ctx.addMember(org.organization.id, 'admin');
      await patch(admin.token, { framework: 'iso-42001', clauseId: '5', status: 'covered' });
      const changed = `changed-${admin.email}`;
      await ctx.db.db.update(users).set({ email: changed }).where(eq(users.id, admin.userId));

      const read = await ctx.get(MAPPING, { token: org.token });
      expect(read.json().data.notes[0]).toMatchObject({
        clauseId: '5',
        reviewedBy: admin.userId,
        reviewedByEmail: admin.email,
      });
      ctx.clock.advance(60_000);
      const again = await patch(admin.token, { framework: 'iso-42001', clauseId: '5' });
      expect(again.json().data.note).toMatchObject({
        status: 'covered',
        reviewedByEmail: changed,
        reviewedAt: ctx.clock.now().toISOString(),
      });
    });

    it('is idempotent: the same PATCH repeated leaves one note', async () => {
      const org = await governanceOrg(ctx, 'Sequential');
      const body = { framework: 'iso-42001', clauseId: 'A.5', status: 'covered', evidence: 'FRIA done' };
      const a = await patch(org.token, body);
      const b = await patch(org.token, body);
      expect(b.json().data).toEqual(a.json().data);
      expect(await notesOf(ctx, org.organization.id)).toHaveLength(1);
    });

    it('answers concurrent identical PATCHes all 200 with one note', async () => {
      const org = await governanceOrg(ctx, 'Concurrent');
      const body = { framework: 'iso-42001', clauseId: '8.4', status: 'partial' };
      const results = await Promise.all(Array.from({ length: 6 }, () => patch(org.token, body)));
      expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
      const notes = await notesOf(ctx, org.organization.id);
      expect(notes).toHaveLength(1);
      expect(notes[0]!.status).toBe('partial');
      expect(await auditEntriesOf(ctx, org.organization.id, 'compliance.mapping.updated')).toHaveLength(6);
    });
  });

  describe('GET mapping and coverage', () => {
    it('lists only noted clauses in catalogue order with the hand-computed coverage', async () => {
      const org = await governanceOrg(ctx, 'Coverage');
      const writes: [string, string][] = [
        ['A.10', 'covered'],
        ['4', 'covered'],
        ['6.1.4', 'partial'],
        ['A.3', 'not-applicable'],
        ['A.4', 'not-applicable'],
        ['9', 'gap'],
      ];
      for (const [clauseId, status] of writes) {
        const res = await patch(org.token, { framework: 'iso-42001', clauseId, status });
        expect(res.statusCode, res.body).toBe(200);
      }
      const res = await ctx.get(MAPPING, { token: viewer.token });
      expect(res.json().data.notes).toEqual([]);

      const own = await ctx.get(MAPPING, { token: org.token, query: { framework: 'iso-42001' } });
      const data = own.json().data;
      expect(data.framework).toBe('iso-42001');
      expect(data.totalClauses).toBe(18);
      expect(data.notes.map((n: { clauseId: string }) => n.clauseId)).toEqual([
        '4',
        '6.1.4',
        '9',
        'A.3',
        'A.4',
        'A.10',
      ]);
      // 18 clauses: covered 2, partial 1, n/a 2, gap 1 noted + 12 without a note = 13;
      // (2 + 0.5) / (18 − 2) = 2.5 / 16 = 15.625 → 15.6
      expect(data.coverage).toEqual({
        covered: 2,
        partial: 1,
        gap: 13,
        notApplicable: 2,
        total: 18,
        percent: 15.6,
      });

      const other = await ctx.get(MAPPING, { token: org.token, query: { framework: 'eu-ai-act' } });
      expect(other.json().data.notes).toEqual([]);
      expect(other.json().data.coverage).toEqual({
        covered: 0,
        partial: 0,
        gap: 15,
        notApplicable: 0,
        total: 15,
        percent: 0,
      });
    });

    it('reports 0 percent when every clause is not applicable', async () => {
      const org = await governanceOrg(ctx, 'Nothing applies');
      const catalogue = (
        await ctx.get(CATALOGUE, { token: org.token, query: { framework: 'eu-ai-act' } })
      ).json().data.clauses as { clauseId: string }[];
      let last;
      for (const { clauseId } of catalogue) {
        last = await patch(org.token, { framework: 'eu-ai-act', clauseId, status: 'not-applicable' });
      }
      expect(last!.json().data.coverage).toEqual({
        covered: 0,
        partial: 0,
        gap: 0,
        notApplicable: 15,
        total: 15,
        percent: 0,
      });
    });
  });
  describe('crosswalk', () => {
    it('shows each theme’s clauses in the three frameworks with the organization’s status', async () => {
      const org = await governanceOrg(ctx, 'Crosswalk');
      await patchMapping(ctx, org.token, { framework: 'eu-ai-act', clauseId: 'art-27', status: 'covered' });
      await patchMapping(ctx, org.token, { framework: 'iso-42001', clauseId: 'A.5', status: 'partial' });
      const res = await ctx.get(CROSSWALK, { token: viewer.token });
      expect(res.statusCode, res.body).toBe(200);
      // Another organization's notes do not show: the viewer's organization has none.
      const theirs = res
        .json()
        .data.themes.find((t: { themeId: string }) => t.themeId === 'impact-assessment');
      expect(theirs.frameworks[1].clauses[0]).toMatchObject({
        clauseId: 'art-27',
        status: 'gap',
        noted: false,
      });

      const own = (await ctx.get(CROSSWALK, { token: org.token })).json().data;
      expect(own.themes.length).toBeGreaterThanOrEqual(8);
      const impact = own.themes.find((t: { themeId: string }) => t.themeId === 'impact-assessment');
      expect(impact.title).toBe('Impact assessment');
      expect(impact.frameworks.map((f: { framework: string }) => f.framework)).toEqual([
        'iso-42001',
        'eu-ai-act',
        'nist-rmf',
      ]);
      const [iso, eu, nist] = impact.frameworks;
      expect(iso.clauses.map((c: { clauseId: string; status: string }) => [c.clauseId, c.status])).toEqual([
        ['6.1.4', 'gap'],
        ['8.4', 'gap'],
        ['A.5', 'partial'],
      ]);
      expect(eu.clauses).toEqual([
        { clauseId: 'art-27', title: 'Fundamental rights impact assessment', status: 'covered', noted: true },
      ]);
      expect(nist.clauses.map((c: { clauseId: string }) => c.clauseId)).toEqual(['MAP-1', 'MAP-5']);
      expect(nist.clauses.every((c: { noted: boolean }) => !c.noted)).toBe(true);
    });

    it('needs the plan feature', async () => {
      expectErrorEnvelope(await ctx.get(CROSSWALK, { token: free.token }), 403, 'UPGRADE_REQUIRED');
    });
  });
});
