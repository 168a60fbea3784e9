import { describe, expect, it } from 'vitest';
import { CATALOGUES, FRAMEWORKS, hasClause, isFramework } from './index.js';

describe('compliance catalogues', () => {
  it('has the sizes the product promises', () => {
    // iso: 7 management clauses + 6.1.4 + 8.4 + A.2…A.10 (9) = 18
    expect(CATALOGUES['iso-42001']).toHaveLength(18);
    // eu: articles 4, 9–15 (7), 17, 26, 27, 43, 49, 72, 73 = 15
    expect(CATALOGUES['eu-ai-act']).toHaveLength(15);
    // nist: GOVERN 6 + MAP 5 + MEASURE 4 + MANAGE 4 = 19
    expect(CATALOGUES['nist-rmf']).toHaveLength(19);
  });

  it('has unique, short ids, a title and guidance, and gap as default in every clause', () => {
    for (const framework of FRAMEWORKS) {
      const ids = CATALOGUES[framework].map((c) => c.clauseId);
      expect(new Set(ids).size).toBe(ids.length);
      for (const c of CATALOGUES[framework]) {
        expect(c.clauseId.length).toBeLessThanOrEqual(32);
        expect(c.title.length).toBeGreaterThan(0);
        expect(c.guidance.length).toBeGreaterThan(0);
        expect(c.defaultStatus).toBe('gap');
      }
    }
  });

  it('knows its frameworks and clauses', () => {
    expect(isFramework('iso-42001')).toBe(true);
    expect(isFramework('iso-27001')).toBe(false);
    expect(isFramework(undefined)).toBe(false);
    expect(hasClause('iso-42001', '6.1.4')).toBe(true);
    expect(hasClause('iso-42001', 'A.11')).toBe(false);
    expect(hasClause('eu-ai-act', 'art-27')).toBe(true);
    expect(hasClause('nist-rmf', 'GOVERN-7')).toBe(false);
  });
});
