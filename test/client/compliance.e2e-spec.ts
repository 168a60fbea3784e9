import { GovernanceError } from '@governance/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListeningService, signUp, type SignedUp } from './harness.js';

describe('client: FRIA, compliance mapping, the compliance PDF and the audit export', () => {
  let service: ListeningService;
  let owner: SignedUp;
  let friaId: string;

  beforeAll(async () => {
    service = await ListeningService.start();
    owner = await signUp(service, 'Acme Lending');
    // FRIA and compliance mapping are on the governance plan; plans change through the operator CLI only.
    await service.ctx.setPlan(owner.organizationId, 'governance');
  });
  afterAll(async () => service?.close());

  it('a FRIA is drafted, submitted, approved and verified against its anchored hash', async () => {
    const draft = await owner.client.post('/api/v1/fria', {
      body: {
        systemName: 'Credit scoring',
        purpose: 'Consumer loan decisions',
        identifiedRisks: [
          {
            title: 'Indirect discrimination',
            severity: 'high',
            affectedRights: ['non-discrimination'],
            mitigation: 'Quarterly bias audit',
          },
        ],
      },
    });
    expect(draft).toMatchObject({ status: 'draft', chainHash: null, completeness: 38 });
    friaId = draft.id;

    const inReview = await owner.client.post('/api/v1/fria/{id}/submit', {
      params: { path: { id: friaId } },
    });
    expect(inReview.status).toBe('review');
    expect(inReview.chainHash).toMatch(/^[0-9a-f]{64}$/);
    const approved = await owner.client.post('/api/v1/fria/{id}/approve', {
      params: { path: { id: friaId } },
    });
    expect(approved).toMatchObject({ status: 'approved', approvedBy: owner.userId });
    expect(
      await owner.client.get('/api/v1/fria/{id}/verify', { params: { path: { id: friaId } } }),
    ).toMatchObject({
      id: friaId,
      status: 'approved',
      matches: true,
    });

    // An approved assessment is not edited: a typed conflict.
    const edit = await owner.client
      .patch('/api/v1/fria/{id}', { params: { path: { id: friaId } }, body: { purpose: 'Changed' } })
      .catch((e: unknown) => e);
    expect(edit).toBeInstanceOf(GovernanceError);
    expect(edit).toMatchObject({ status: 409, code: 'CONFLICT' });
  });

  it('attests a clause with the FRIA as evidence, and the mapping reports it with the coverage', async () => {
    const update = await owner.client.patch('/api/v1/compliance/mapping', {
      body: {
        framework: 'eu-ai-act',
        clauseId: 'art-27',
        status: 'covered',
        evidence: 'FRIA approved for the credit model',
        evidenceRefs: [{ type: 'fria', id: friaId }],
      },
    });
    expect(update.note).toMatchObject({
      clauseId: 'art-27',
      status: 'covered',
      reviewedByEmail: owner.email,
    });
    expect(update.coverage).toMatchObject({ covered: 1, total: 15 });

    const mapping = await owner.client.get('/api/v1/compliance/mapping', {
      params: { query: { framework: 'eu-ai-act' } },
    });
    expect(mapping.notes).toEqual([
      expect.objectContaining({ clauseId: 'art-27', evidenceRefs: [{ type: 'fria', id: friaId }] }),
    ]);
    expect(mapping.coverage.percent).toBeGreaterThan(0);

    const refused = await owner.client
      .patch('/api/v1/compliance/mapping', {
        body: {
          framework: 'eu-ai-act',
          clauseId: 'art-27',
          evidenceRefs: [{ type: 'fria', id: 'f'.repeat(24) }],
        },
      })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      details: [expect.objectContaining({ field: 'evidenceRefs[0]' })],
    });
  });

  it('downloads the compliance PDF', async () => {
    const file = await owner.client.download('/api/v1/reports/compliance');
    expect(file.contentType).toBe('application/pdf');
    expect(file.filename).toMatch(/^compliance-report-.+\.pdf$/);
    const bytes = await file.bytes();
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe('%PDF-');
    expect(bytes.length).toBeGreaterThan(1000);
  }, 120_000);

  it('streams the audit export as NDJSON, entry by entry, in chain order', async () => {
    const file = await owner.client.download('/api/v1/audit/export');
    expect(file.contentType).toBe('application/x-ndjson');
    const entries: { sequence: number; eventType: string }[] = [];
    for await (const entry of file.ndjson<{ sequence: number; eventType: string }>()) entries.push(entry);
    expect(entries.length).toBeGreaterThan(3);
    expect(entries.map((e) => e.sequence)).toEqual(entries.map((_e, i) => i + 1));
    expect(entries.map((e) => e.eventType)).toEqual(
      expect.arrayContaining(['auth.register', 'fria.transition', 'compliance.mapping.updated']),
    );
  });
});
