import type { ClauseStatus, Framework } from '../compliance-mapping.schema.js';

/** One clause of a framework catalogue: product data, paraphrased in our own words, never the standard's text. */
export interface CatalogueClause {
  clauseId: string;
  title: string;
  /** One line on what evidence usually shows the clause is met. */
  guidance: string;
  defaultStatus: ClauseStatus & 'gap';
}

export const FRAMEWORKS: readonly Framework[] = ['iso-42001', 'eu-ai-act', 'nist-rmf'];

/** Builds a clause with the default status every clause starts from. */
export const clause = (clauseId: string, title: string, guidance: string): CatalogueClause => ({
  clauseId,
  title,
  guidance,
  defaultStatus: 'gap',
});
