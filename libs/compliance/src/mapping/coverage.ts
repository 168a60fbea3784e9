import type { ClauseStatus } from './compliance-mapping.schema.js';

export interface Coverage {
  covered: number;
  partial: number;
  gap: number;
  notApplicable: number;
  total: number;
  /** (covered + partial / 2) / (total − notApplicable) × 100, one decimal; 0 when no clause applies. */
  percent: number;
}

/**
 * The coverage rollup of one framework. Clauses without a note count as gaps; statuses of ids outside
 * the catalogue are ignored, so the counts always add up to the catalogue's size.
 * See docs/compliance-officers.md, "Compliance mapping"; coverage.spec.ts.
 */
export function coverageOf(
  catalogueIds: readonly string[],
  statuses: ReadonlyMap<string, ClauseStatus>,
): Coverage {
  const counts = { covered: 0, partial: 0, gap: 0, notApplicable: 0 };
  for (const id of catalogueIds) {
    const status = statuses.get(id) ?? 'gap';
    if (status === 'not-applicable') counts.notApplicable += 1;
    else counts[status] += 1;
  }
  const total = catalogueIds.length;
  const applicable = total - counts.notApplicable;
  // With nothing applicable there is nothing left to cover; 0 keeps the field a number for every client.
  const percent =
    applicable === 0 ? 0 : Math.round(((counts.covered + counts.partial / 2) / applicable) * 1000) / 10;
  return { ...counts, total, percent };
}
