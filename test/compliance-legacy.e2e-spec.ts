import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { governanceOrg, MAPPING_NOTES, patchMapping } from './support/compliance-suite.js';

const LINK = (publicUrl: string) =>
  `<${publicUrl}/docs/migrations/compliance-mapping-notes>; rel="deprecation"`;

describe('legacy compliance mapping-notes', () => {
  let ctx: TestContext;
  let org: Registered;

  beforeAll(async () => {
    // 2026-11-25: the legacy mount's sunset, 2027-04-12, is 5 + 31 + 31 + 28 + 31 + 12 = 138 days ahead.
    ctx = await TestContext.create({ now: '2026-11-25T10:00:00.000Z' });
    org = await governanceOrg(ctx, 'Legacy');
  });
  afterAll(async () => ctx?.close());

  const put = (token: string, body: unknown) => ctx.request('PUT', MAPPING_NOTES, { token, body });
  const expectDeprecated = (res: { headers: Record<string, unknown> }, sunset: string) => {
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.sunset).toBe(sunset);
    expect(res.headers.link).toBe(LINK(ctx.config.publicUrl));
  };

  it('merges the legacy strings over the structured evidence, with the deprecation headers', async () => {
    await patchMapping(ctx, org.token, { framework: 'iso-42001', clauseId: '4', evidence: 'Scope v2' });
    await patchMapping(ctx, org.token, { framework: 'iso-42001', clauseId: '5', evidence: 'Policy signed' });
    await patchMapping(ctx, org.token, { framework: 'iso-42001', clauseId: '7', status: 'covered' });
    const empty = await ctx.get(MAPPING_NOTES, { token: org.token });
    expect(empty.statusCode, empty.body).toBe(200);
    // Clause 7 has no evidence, so it has no entry.
    expect(empty.json().data).toEqual({ notes: { '4': 'Scope v2', '5': 'Policy signed' } });
    expectDeprecated(empty, 'Mon, 12 Apr 2027 00:00:00 GMT');

    const written = await put(org.token, { notes: { '5': 'Legacy policy text', 'A.5': 'Old FRIA note' } });
    expect(written.statusCode, written.body).toBe(200);
    expectDeprecated(written, 'Mon, 12 Apr 2027 00:00:00 GMT');
    const merged = { '4': 'Scope v2', '5': 'Legacy policy text', 'A.5': 'Old FRIA note' };
    expect(written.json().data).toEqual({ notes: merged });
    expect((await ctx.get(MAPPING_NOTES, { token: org.token })).json().data).toEqual({ notes: merged });

    // Only the legacy map was written: the structured note of clause 5 still holds its own evidence.
    const mapping = (
      await ctx.get(MAPPING_NOTES.replace('mapping-notes', 'mapping'), { token: org.token })
    ).json();
    const five = mapping.data.notes.find((n: { clauseId: string }) => n.clauseId === '5');
    expect(five.evidence).toBe('Policy signed');
    expect(mapping.data.notes.map((n: { clauseId: string }) => n.clauseId)).toEqual(['4', '5', '7']);

    const audit = await auditEntriesOf(ctx, org.organization.id, 'compliance.mapping_notes.updated');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.metadata).toEqual({ framework: 'iso-42001', clauseIds: ['5', 'A.5'] });
  });

  it('keeps each framework’s legacy map apart, and a PUT replaces only its own', async () => {
    const o = await governanceOrg(ctx, 'Legacy frameworks');
    await put(o.token, { notes: { '4': 'iso text' } });
    const eu = await put(o.token, { framework: 'eu-ai-act', notes: { 'art-27': 'eu text' } });
    expect(eu.json().data).toEqual({ notes: { 'art-27': 'eu text' } });
    const iso = await ctx.get(MAPPING_NOTES, { token: o.token, query: { framework: 'iso-42001' } });
    expect(iso.json().data).toEqual({ notes: { '4': 'iso text' } });

    const replaced = await put(o.token, { framework: 'iso-42001', notes: { '10': 'new' } });
    expect(replaced.json().data).toEqual({ notes: { '10': 'new' } });
    const euAgain = await ctx.get(MAPPING_NOTES, { token: o.token, query: { framework: 'eu-ai-act' } });
    expect(euAgain.json().data).toEqual({ notes: { 'art-27': 'eu text' } });
  });

  it('refuses keys outside the catalogue, non-strings, text over 4,000 and a bad body, changing nothing', async () => {
    const o = await governanceOrg(ctx, 'Legacy bounds');
    const ok = await put(o.token, { notes: { '6.1.4': 'x'.repeat(4000) } });
    expect(ok.statusCode, ok.body).toBe(200);

    const bad = await put(o.token, { notes: { 'art-27': 'wrong framework', '4': 'x'.repeat(4001), '5': 3 } });
    const body = expectErrorEnvelope(bad, 400, 'VALIDATION_ERROR');
    // A JSON object's integer-like keys come first in JavaScript, so '4' and '5' precede 'art-27'.
    expect(body.details).toEqual([
      { field: 'notes.4', message: 'must be at most 4000 characters' },
      { field: 'notes.5', message: 'must be a string' },
      { field: 'notes.art-27', message: 'not a clause of iso-42001' },
    ]);
    expectErrorEnvelope(await put(o.token, { notes: ['4'] }), 400, 'VALIDATION_ERROR');
    expectErrorEnvelope(await put(o.token, { notes: null }), 400, 'VALIDATION_ERROR');
    expectErrorEnvelope(await put(o.token, {}), 400, 'VALIDATION_ERROR');
    expectErrorEnvelope(await put(o.token, { framework: 'iso-1', notes: {} }), 400, 'VALIDATION_ERROR');
    const unknown = await ctx.get(MAPPING_NOTES, { token: o.token, query: { framework: 'iso-1' } });
    expectErrorEnvelope(unknown, 400, 'VALIDATION_ERROR');

    const after = await ctx.get(MAPPING_NOTES, { token: o.token });
    expect(after.json().data.notes).toEqual({ '6.1.4': 'x'.repeat(4000) });
    expect(await auditEntriesOf(ctx, o.organization.id, 'compliance.mapping_notes.updated')).toHaveLength(1);
  });

  it('lets members and viewers read but not write, and needs the plan feature', async () => {
    const o = await governanceOrg(ctx, 'Legacy roles');
    for (const role of ['member', 'viewer'] as const) {
      const m = await ctx.addMember(o.organization.id, role);
      expect((await ctx.get(MAPPING_NOTES, { token: m.token })).statusCode).toBe(200);
      expectErrorEnvelope(await put(m.token, { notes: { '4': 'x' } }), 403, 'FORBIDDEN');
    }
    await ctx.setPlan(o.organization.id, 'scale');
    expectErrorEnvelope(await ctx.get(MAPPING_NOTES, { token: o.token }), 403, 'UPGRADE_REQUIRED');
    expectErrorEnvelope(await put(o.token, { notes: {} }), 403, 'UPGRADE_REQUIRED');
  });

  it('moves the Sunset to 91 days after today once the fixed date is under 90 days away', async () => {
    // 2027-02-01 → 2027-04-12 is 27 + 31 + 12 = 70 days: too close; 2027-02-01 + 91 days = 27 (Feb) + 31 (Mar)
    // + 30 (Apr) = 88 → 2027-05-01, + 3 → 2027-05-03.
    ctx.clock.set('2027-02-01T15:00:00.000Z');
    // The earlier session has expired by then: log in again at the new time.
    const token = await ctx.login(org.user.email);
    const res = await ctx.get(MAPPING_NOTES, { token });
    expect(res.statusCode, res.body).toBe(200);
    expectDeprecated(res, 'Mon, 03 May 2027 00:00:00 GMT');
  });

  it('serves the migration note the Link names', async () => {
    const res = await ctx.get('/docs/migrations/compliance-mapping-notes');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('/api/v1/compliance/mapping');
    const v1 = await ctx.get('/docs/migrations/unversioned-to-v1');
    expect(v1.statusCode).toBe(200);
  });
});
