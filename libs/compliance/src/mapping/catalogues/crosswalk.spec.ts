import { describe, expect, it } from 'vitest';
import { CROSSWALK } from './crosswalk.js';
import { FRAMEWORKS, hasClause } from './index.js';

describe('crosswalk', () => {
  it('names only clauses of each framework’s catalogue, at least one per framework in every theme', () => {
    for (const theme of CROSSWALK) {
      for (const framework of FRAMEWORKS) {
        const ids = theme.clauses[framework];
        expect(ids.length, `${theme.themeId} ${framework}`).toBeGreaterThan(0);
        expect(new Set(ids).size).toBe(ids.length);
        for (const id of ids)
          expect(hasClause(framework, id), `${theme.themeId}: ${framework} ${id}`).toBe(true);
      }
    }
  });

  it('has unique theme ids and relates impact assessment across all three', () => {
    expect(new Set(CROSSWALK.map((t) => t.themeId)).size).toBe(CROSSWALK.length);
    const impact = CROSSWALK.find((t) => t.themeId === 'impact-assessment')!;
    expect(impact.clauses).toEqual({
      'iso-42001': ['6.1.4', '8.4', 'A.5'],
      'eu-ai-act': ['art-27'],
      'nist-rmf': ['MAP-1', 'MAP-5'],
    });
  });

  it('would catch a clause missing from its catalogue', () => {
    expect(hasClause('iso-42001', 'A.11')).toBe(false);
  });
});
