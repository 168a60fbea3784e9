import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { governanceOrg, insertFria, notesOf, patchMapping } from './support/compliance-suite.js';
import { refundFlagPolicy } from './support/review-suite.js';

describe('compliance mapping: bounds and evidence references', () => {
  let ctx: TestContext;
  let org: Registered;
  let other: Registered;
  let friaId: string;
  let policyId: string;
  let auditId: string;
  let otherFria: string;
  let otherPolicy: string;
  let otherAudit: string;
  let incidentId: string;
  let otherIncident: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    org = await governanceOrg(ctx, 'Refs');
    other = await governanceOrg(ctx, 'Refs elsewhere');
    friaId = await insertFria(ctx, org.organization.id);
    otherFria = await insertFria(ctx, other.organization.id);
    policyId = await refundFlagPolicy(ctx, org.organization.id, []);
    otherPolicy = await refundFlagPolicy(ctx, other.organization.id, []);
    // An audit entry in each organization: the first mapping write of each.
    for (const o of [org, other]) {
      const res = await patchMapping(ctx, o.token, { framework: 'iso-42001', clauseId: '10', status: 'gap' });
      expect(res.statusCode, res.body).toBe(200);
    }
    auditId = (await auditEntriesOf(ctx, org.organization.id, 'compliance.mapping.updated'))[0]!.id;
    otherAudit = (await auditEntriesOf(ctx, other.organization.id, 'compliance.mapping.updated'))[0]!.id;
    const incident = (token: string) =>
      ctx.post('/api/v1/incidents', {
        token,
        body: { title: 'Outage', category: 'other', awareAt: ctx.clock.now().toISOString() },
      });
    incidentId = (await incident(org.token)).json().data.id;
    otherIncident = (await incident(other.token)).json().data.id;
  });
  afterAll(async () => ctx?.close());

  const patch = (body: Record<string, unknown>) => patchMapping(ctx, org.token, body);
  const base = { framework: 'iso-42001', clauseId: 'A.5' };
  /** A refused write changes nothing: the clause still has no note. */
  const expectNoNote = async (clauseId = 'A.5') => {
    const notes = await notesOf(ctx, org.organization.id);
    expect(notes.filter((n) => n.clauseId === clauseId)).toEqual([]);
  };

  describe('bounds', () => {
    it('refuses a clauseId of 33 characters, and one of 32 outside the catalogue', async () => {
      const long = await patch({ framework: 'iso-42001', clauseId: 'x'.repeat(33) });
      const body = expectErrorEnvelope(long, 400, 'VALIDATION_ERROR');
      expect(JSON.stringify(body)).toContain('clauseId');
      const unknown = await patch({ framework: 'iso-42001', clauseId: 'y'.repeat(32) });
      const details = expectErrorEnvelope(unknown, 400, 'VALIDATION_ERROR').details;
      expect(details).toEqual([
        { field: 'clauseId', message: expect.stringContaining('not in the iso-42001') },
      ]);
      expect(await notesOf(ctx, org.organization.id)).toHaveLength(1);
    });

    it('refuses a clause of another framework, an unknown framework, a missing one, an unknown status', async () => {
      expectErrorEnvelope(
        await patch({ framework: 'iso-42001', clauseId: 'art-27' }),
        400,
        'VALIDATION_ERROR',
      );
      expectErrorEnvelope(await patch({ framework: 'iso-9001', clauseId: '4' }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await patch({ clauseId: '4' }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await patch({ framework: 'iso-42001' }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await patch({ ...base, status: 'done' }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await patch({ ...base, clauseId: 42 }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await patch({ ...base, evidence: ['x'] }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await patch({ ...base, evidenceRefs: 'x' }), 400, 'VALIDATION_ERROR');
      expectErrorEnvelope(await patch({ ...base, evidenceRefs: [null] }), 400, 'VALIDATION_ERROR');
      await expectNoNote();
    });

    it('accepts evidence of 4,000 characters and refuses 4,001', async () => {
      expectErrorEnvelope(
        await patch({ framework: 'iso-42001', clauseId: 'A.6', evidence: 'e'.repeat(4001) }),
        400,
        'VALIDATION_ERROR',
      );
      await expectNoNote('A.6');
      const ok = await patch({ framework: 'iso-42001', clauseId: 'A.6', evidence: 'e'.repeat(4000) });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json().data.note.evidence).toHaveLength(4000);
      // The audit entry keeps the length and a 200-character excerpt, not the whole text.
      const entries = await auditEntriesOf(ctx, org.organization.id, 'compliance.mapping.updated');
      expect(entries.at(-1)!.metadata).toMatchObject({
        evidenceLength: 4000,
        evidenceExcerpt: 'e'.repeat(200),
      });
    });

    it('accepts 20 evidence references and refuses 21', async () => {
      const refs = (n: number) => Array.from({ length: n }, () => ({ type: 'policy', id: policyId }));
      const refused = await patch({ framework: 'iso-42001', clauseId: 'A.2', evidenceRefs: refs(21) });
      expectErrorEnvelope(refused, 400, 'VALIDATION_ERROR');
      await expectNoNote('A.2');
      const ok = await patch({ framework: 'iso-42001', clauseId: 'A.2', evidenceRefs: refs(20) });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json().data.note.evidenceRefs).toHaveLength(20);
    });

    it('refuses references with an unknown type or an id that is not an object id', async () => {
      const badType = await patch({ ...base, evidenceRefs: [{ type: 'risk', id: policyId }] });
      expectErrorEnvelope(badType, 400, 'VALIDATION_ERROR');
      const badId = await patch({ ...base, evidenceRefs: [{ type: 'policy', id: 'nope' }] });
      expectErrorEnvelope(badId, 400, 'VALIDATION_ERROR');
      await expectNoNote();
    });
  });

  describe('evidence references', () => {
    it('accepts a FRIA, a policy, an audit entry and an incident of the organization, stored in order', async () => {
      const evidenceRefs = [
        { type: 'fria', id: friaId },
        { type: 'policy', id: policyId },
        { type: 'audit', id: auditId },
        { type: 'incident', id: incidentId },
      ];
      const res = await patch({
        framework: 'eu-ai-act',
        clauseId: 'art-27',
        status: 'covered',
        evidenceRefs,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.note.evidenceRefs).toEqual(evidenceRefs);
      const entries = await auditEntriesOf(ctx, org.organization.id, 'compliance.mapping.updated');
      expect(entries.at(-1)!.metadata).toMatchObject({ clauseId: 'art-27', evidenceRefs });

      // Omitted refs are kept; an empty list clears them.
      const kept = await patch({ framework: 'eu-ai-act', clauseId: 'art-27', evidence: 'see FRIA' });
      expect(kept.json().data.note.evidenceRefs).toEqual(evidenceRefs);
      const cleared = await patch({ framework: 'eu-ai-act', clauseId: 'art-27', evidenceRefs: [] });
      expect(cleared.json().data.note.evidenceRefs).toEqual([]);
    });

    it.each([
      ['fria', () => otherFria],
      ['policy', () => otherPolicy],
      ['audit', () => otherAudit],
      ['incident', () => otherIncident],
    ])('refuses a %s of another organization as not found, naming the ref', async (type, id) => {
      const evidenceRefs = [
        { type: 'policy', id: policyId },
        { type, id: id() },
      ];
      const res = await patch({ ...base, status: 'covered', evidenceRefs });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual([{ field: 'evidenceRefs[1]', message: `${type} ${id()} not found` }]);
      await expectNoNote();
    });

    it('refuses absent records, listing each refused ref', async () => {
      const absent = '0123456789abcdef01234567';
      const evidenceRefs = [
        { type: 'incident', id: absent },
        { type: 'fria', id: friaId },
        { type: 'audit', id: absent },
      ];
      const res = await patch({ ...base, evidenceRefs });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual([
        { field: 'evidenceRefs[0]', message: `incident ${absent} not found` },
        { field: 'evidenceRefs[2]', message: `audit ${absent} not found` },
      ]);
      await expectNoNote();
    });
  });
});
