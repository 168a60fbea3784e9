import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canTransition,
  collapseWizardRisks,
  completeness,
  type FriaContents,
  friaHash,
  withRiskDefaults,
} from './fria.contents.js';
import type { FriaStatus } from './fria.schema.js';

const base: FriaContents = {
  systemName: 'Credit scoring',
  deployerProfileId: null,
  purpose: null,
  affectedPersons: null,
  usageContext: null,
  durationOfUse: null,
  identifiedRisks: [],
  humanOversightSummary: null,
  complaintsMechanism: null,
};

describe('friaHash', () => {
  it('is the SHA-256 of the canonical JSON, keys sorted', () => {
    const canonical =
      '{"affectedPersons":null,"complaintsMechanism":null,"deployerProfileId":null,"durationOfUse":null,' +
      '"humanOversightSummary":null,"identifiedRisks":[],"purpose":null,"systemName":"Credit scoring",' +
      '"usageContext":null}';
    expect(friaHash(base)).toBe(createHash('sha256').update(canonical).digest('hex'));
  });

  it('does not depend on key order', () => {
    const reordered = Object.fromEntries(Object.entries(base).reverse()) as unknown as FriaContents;
    expect(friaHash(reordered)).toBe(friaHash(base));
  });

  it('changes when any field changes', () => {
    const hashes = new Set([friaHash(base)]);
    for (const key of Object.keys(base) as (keyof FriaContents)[]) {
      const value = key === 'identifiedRisks' ? [withRiskDefaults({ title: 'x' })] : 'changed';
      hashes.add(friaHash({ ...base, [key]: value }));
    }
    expect(hashes.size).toBe(10);
  });
});

describe('completeness', () => {
  it('counts the 8 fields; blank strings are not populated', () => {
    // Nothing populated: 0 (unreachable over HTTP, where systemName is required and cannot be blanked).
    expect(completeness({ ...base, systemName: '  ' })).toBe(0);
    // systemName alone: 1/8 = 12.5 → 13.
    expect(completeness(base)).toBe(13);
    // systemName, purpose, risks, complaints = 4/8 = 50; blank usageContext not counted.
    expect(
      completeness({
        ...base,
        purpose: 'p',
        usageContext: '   ',
        complaintsMechanism: 'c',
        identifiedRisks: [withRiskDefaults({ title: 'r' })],
        deployerProfileId: 'not counted',
      }),
    ).toBe(50);
    expect(
      completeness({
        ...base,
        purpose: 'p',
        affectedPersons: 'a',
        usageContext: 'u',
        durationOfUse: 'd',
        identifiedRisks: [withRiskDefaults({ title: 'r' })],
        humanOversightSummary: 'h',
        complaintsMechanism: 'c',
      }),
    ).toBe(100);
  });
});

describe('collapseWizardRisks', () => {
  it('makes one medium row and keeps the field not sent from a synthetic row', () => {
    const first = collapseWizardRisks('bias', 'audit');
    expect(first).toEqual([
      {
        title: 'Identified risks',
        description: 'bias',
        mitigation: 'audit',
        likelihood: 'medium',
        severity: 'medium',
        residualRisk: 'medium',
        affectedRights: [],
      },
    ]);
    expect(collapseWizardRisks(undefined, 'review', first)[0]).toMatchObject({
      description: 'bias',
      mitigation: 'review',
    });
    const structured = [withRiskDefaults({ title: 'Other', description: 'keep?' })];
    expect(collapseWizardRisks(undefined, 'm', structured)[0]!.description).toBeUndefined();
  });
});

describe('canTransition', () => {
  const allowed = new Set([
    'draft>review',
    'draft>archived',
    'review>approved',
    'review>draft',
    'review>archived',
    'approved>draft',
    'approved>archived',
  ]);
  const states: FriaStatus[] = ['draft', 'review', 'approved', 'archived'];
  for (const from of states) {
    for (const to of states) {
      it(`${from} → ${to}`, () => expect(canTransition(from, to)).toBe(allowed.has(`${from}>${to}`)));
    }
  }
});
