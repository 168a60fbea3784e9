import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { createFria, expectedHash, FRIA, friaIn, friaOrganization, move } from './support/fria-suite.js';

const MEDIUM = { likelihood: 'medium', severity: 'medium', residualRisk: 'medium', affectedRights: [] };

describe('FRIA contents, access and lists', () => {
  let ctx: TestContext;
  let org: Awaited<ReturnType<typeof friaOrganization>>;
  let owner: Registered;
  let other: Awaited<ReturnType<typeof friaOrganization>>;

  beforeAll(async () => {
    ctx = await TestContext.create();
    org = await friaOrganization(ctx, 'Fria content');
    owner = org.owner;
    other = await friaOrganization(ctx, 'Fria other');
  });
  afterAll(() => ctx.close());

  it('creates a draft with trimmed name, defaults and completeness', async () => {
    const res = await ctx.post(FRIA, {
      token: org.member.token,
      body: { systemName: '  Triage bot  ', identifiedRisks: [{ title: 'Bias', likelihood: 'high' }] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({
      organizationId: org.organizationId,
      systemName: 'Triage bot',
      status: 'draft',
      chainHash: null,
      approvedBy: null,
      createdBy: org.member.userId,
      purpose: null,
      identifiedRisks: [{ title: 'Bias', ...MEDIUM, likelihood: 'high' }],
      // systemName and identifiedRisks: 2/8 = 25.
      completeness: 25,
    });
  });

  it('computes completeness at 1/8, 4/8 and 8/8', async () => {
    // systemName alone: 1/8 = 12.5, rounded 13 (systemName is required, so 13 is the minimum).
    const one = await createFria(ctx, owner.token, {
      systemName: 'One',
      purpose: '   ',
      deployerProfileId: 'dp-1',
    });
    expect((await ctx.get(`${FRIA}/${one.id}`, { token: org.viewer.token })).json().data.completeness).toBe(
      13,
    );
    // systemName, purpose, usageContext, wizard risk row: 4/8 = 50.
    const four = await createFria(ctx, owner.token, {
      systemName: 'Four',
      purpose: 'p',
      usageContext: 'u',
      risksIdentified: 'r',
    });
    expect((await ctx.get(`${FRIA}/${four.id}`, { token: owner.token })).json().data.completeness).toBe(50);
    const all = await createFria(ctx, owner.token, {
      systemName: 'All',
      purpose: 'p',
      affectedPersons: 'a',
      usageContext: 'u',
      durationOfUse: 'd',
      identifiedRisks: [{ title: 't' }],
      humanOversightSummary: 'h',
      complaintsMechanism: 'c',
    });
    expect((await ctx.get(`${FRIA}/${all.id}`, { token: owner.token })).json().data.completeness).toBe(100);
  });

  it('collapses the wizard fields and keeps the one not sent on PATCH', async () => {
    const fria = await createFria(ctx, owner.token, {
      systemName: 'Wizard',
      risksIdentified: 'Discrimination',
      mitigations: 'Human review',
    });
    const row = {
      title: 'Identified risks',
      description: 'Discrimination',
      mitigation: 'Human review',
      ...MEDIUM,
    };
    expect(fria.identifiedRisks).toEqual([row]);
    const patched = await ctx.patch(`${FRIA}/${fria.id}`, {
      token: owner.token,
      body: { mitigations: 'Appeals' },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data.identifiedRisks).toEqual([{ ...row, mitigation: 'Appeals' }]);
    expectErrorEnvelope(
      await ctx.post(FRIA, {
        token: owner.token,
        body: { systemName: 'Both', risksIdentified: 'x', identifiedRisks: [{ title: 'y' }] },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expectErrorEnvelope(
      await ctx.patch(`${FRIA}/${fria.id}`, {
        token: owner.token,
        body: { mitigations: 'x', identifiedRisks: [] },
      }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('accepts every bound and refuses one past it', async () => {
    const risk = { title: 'r' };
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['systemName', { systemName: 'a'.repeat(200) }, { systemName: 'a'.repeat(201) }],
      ['purpose', { purpose: 'a'.repeat(10_000) }, { purpose: 'a'.repeat(10_001) }],
      ['deployerProfileId', { deployerProfileId: 'a'.repeat(64) }, { deployerProfileId: 'a'.repeat(65) }],
      ['risksIdentified', { risksIdentified: 'a'.repeat(10_000) }, { risksIdentified: 'a'.repeat(10_001) }],
      ['risk rows', { identifiedRisks: Array(50).fill(risk) }, { identifiedRisks: Array(51).fill(risk) }],
      [
        'risk title',
        { identifiedRisks: [{ title: 'a'.repeat(200) }] },
        { identifiedRisks: [{ title: 'a'.repeat(201) }] },
      ],
      [
        'risk description',
        { identifiedRisks: [{ title: 't', description: 'a'.repeat(4000) }] },
        { identifiedRisks: [{ title: 't', description: 'a'.repeat(4001) }] },
      ],
      [
        'affectedRights count',
        { identifiedRisks: [{ title: 't', affectedRights: Array(20).fill('privacy') }] },
        { identifiedRisks: [{ title: 't', affectedRights: Array(21).fill('privacy') }] },
      ],
      [
        'affectedRights length',
        { identifiedRisks: [{ title: 't', affectedRights: ['a'.repeat(200)] }] },
        { identifiedRisks: [{ title: 't', affectedRights: ['a'.repeat(201)] }] },
      ],
    ];
    for (const [name, ok, bad] of cases) {
      const accepted = await ctx.post(FRIA, { token: owner.token, body: { systemName: 'Bound', ...ok } });
      expect(accepted.statusCode, name).toBe(201);
      const refused = await ctx.post(FRIA, { token: owner.token, body: { systemName: 'Bound', ...bad } });
      const error = expectErrorEnvelope(refused, 400, 'VALIDATION_ERROR');
      expect((error.details as unknown[] | undefined)?.length ?? 0, name).toBeGreaterThan(0);
    }
    for (const body of [
      {},
      { systemName: '   ' },
      { systemName: 5 },
      { systemName: 'x', identifiedRisks: [{ title: 't', severity: 'extreme' }] },
      { systemName: 'x', identifiedRisks: [{}] },
      { systemName: 'x', identifiedRisks: 'none' },
      { systemName: 'x', unknownField: 1 },
    ]) {
      expectErrorEnvelope(await ctx.post(FRIA, { token: owner.token, body }), 400, 'VALIDATION_ERROR');
    }
  });

  it('refuses a viewer’s writes and a plan without friaWizard', async () => {
    expectErrorEnvelope(
      await ctx.post(FRIA, { token: org.viewer.token, body: { systemName: 'v' } }),
      403,
      'FORBIDDEN',
    );
    const fria = await createFria(ctx, owner.token, { systemName: 'Viewer target' });
    expectErrorEnvelope(
      await ctx.patch(`${FRIA}/${fria.id}`, { token: org.viewer.token, body: { purpose: 'v' } }),
      403,
      'FORBIDDEN',
    );
    const sandbox = await ctx.register({ organizationName: 'No wizard' });
    for (const res of [
      await ctx.get(FRIA, { token: sandbox.token }),
      await ctx.post(FRIA, { token: sandbox.token, body: { systemName: 'x' } }),
      await ctx.get(`${FRIA}/${fria.id}`, { token: sandbox.token }),
    ]) {
      expectErrorEnvelope(res, 403, 'UPGRADE_REQUIRED');
    }
  });

  it('answers 404 for another organization’s assessment on every :id route, changing nothing', async () => {
    const fria = await createFria(ctx, owner.token, { systemName: 'Private' });
    const token = other.owner.token;
    const id = fria.id;
    for (const res of [
      await ctx.get(`${FRIA}/${id}`, { token }),
      await ctx.patch(`${FRIA}/${id}`, { token, body: { purpose: 'x' } }),
      await move(ctx, token, id, 'review'),
      await ctx.post(`${FRIA}/${id}/submit`, { token }),
      await ctx.post(`${FRIA}/${id}/approve`, { token }),
      await ctx.request('DELETE', `${FRIA}/${id}`, { token }),
      await ctx.get(`${FRIA}/not-an-id`, { token }),
      await ctx.request('DELETE', `${FRIA}/not-an-id`, { token }),
    ]) {
      expectErrorEnvelope(res, 404, 'NOT_FOUND');
    }
    const after = (await ctx.get(`${FRIA}/${id}`, { token: owner.token })).json().data;
    expect(after).toMatchObject({ status: 'draft', purpose: null });
  });

  it('lists newest updated first with status filter, escaped search and a capped limit', async () => {
    const lister = await friaOrganization(ctx, 'Fria lists');
    const t = lister.owner.token;
    const a = await createFria(ctx, t, { systemName: 'Alpha 50% model' });
    ctx.clock.advance(1000);
    const b = await createFria(ctx, t, { systemName: 'alpha_beta' });
    ctx.clock.advance(1000);
    const c = await friaIn(ctx, t, 'review', 'Gamma');
    ctx.clock.advance(1000);
    await ctx.patch(`${FRIA}/${a.id}`, { token: t, body: { purpose: 'touched' } });

    const all = (await ctx.get(FRIA, { token: lister.viewer.token })).json();
    expect(all.data.map((f: { id: string }) => f.id)).toEqual([a.id, c.id, b.id]);
    expect(all.data[0].completeness).toBe(25);
    const inReview = (await ctx.get(FRIA, { token: t, query: { status: 'review' } })).json().data;
    expect(inReview.map((f: { id: string }) => f.id)).toEqual([c.id]);
    const alpha = (await ctx.get(FRIA, { token: t, query: { search: 'ALPHA' } })).json().data;
    expect(alpha.map((f: { id: string }) => f.id)).toEqual([a.id, b.id]);
    // "%" and "_" are literal: only "50%" contains a percent sign, only "alpha_beta" an underscore.
    expect((await ctx.get(FRIA, { token: t, query: { search: '50%' } })).json().data).toHaveLength(1);
    expect(
      (await ctx.get(FRIA, { token: t, query: { search: '_' } }))
        .json()
        .data.map((f: { id: string }) => f.id),
    ).toEqual([b.id]);
    const capped = (await ctx.get(FRIA, { token: t, query: { limit: '1000', page: '1' } })).json();
    expect(capped.pagination).toMatchObject({ limit: 100, total: 3 });
    const paged = (await ctx.get(FRIA, { token: t, query: { limit: '2', page: '2' } })).json();
    expect(paged.data.map((f: { id: string }) => f.id)).toEqual([b.id]);
    expectErrorEnvelope(
      await ctx.get(FRIA, { token: t, query: { status: 'done' } }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('verifies the stored contents against the anchor, and detects a row altered in SQL', async () => {
    const draft = await createFria(ctx, owner.token, { systemName: 'Never anchored' });
    const unanchored = await ctx.get(`${FRIA}/${draft.id}/verify`, { token: org.viewer.token });
    expect(unanchored.statusCode).toBe(200);
    expect(unanchored.json().data).toEqual({
      id: draft.id,
      status: 'draft',
      anchoredHash: null,
      computedHash: expectedHash({ systemName: 'Never anchored' }),
      matches: null,
    });

    const fria = await friaIn(ctx, owner.token, 'approved', 'Tampered');
    const anchored = expectedHash({ systemName: 'Tampered' });
    expect((await ctx.get(`${FRIA}/${fria.id}/verify`, { token: owner.token })).json().data).toMatchObject({
      anchoredHash: anchored,
      computedHash: anchored,
      matches: true,
    });
    await ctx.db.db.execute(sql`update fria_assessments set purpose = 'altered' where id = ${fria.id}`);
    expect((await ctx.get(`${FRIA}/${fria.id}/verify`, { token: owner.token })).json().data).toMatchObject({
      status: 'approved',
      anchoredHash: anchored,
      computedHash: expectedHash({ systemName: 'Tampered', purpose: 'altered' }),
      matches: false,
    });
    expectErrorEnvelope(
      await ctx.get(`${FRIA}/${fria.id}/verify`, { token: other.owner.token }),
      404,
      'NOT_FOUND',
    );
  });
});
