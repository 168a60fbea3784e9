import type { Framework } from '../compliance-mapping.schema.js';
import { type CatalogueClause, FRAMEWORKS } from './clause.js';
import { EU_AI_ACT } from './eu-ai-act.js';
import { ISO_42001 } from './iso-42001.js';
import { NIST_RMF } from './nist-rmf.js';

export { type CatalogueClause, FRAMEWORKS };

export const CATALOGUES: Readonly<Record<Framework, readonly CatalogueClause[]>> = {
  'iso-42001': ISO_42001,
  'eu-ai-act': EU_AI_ACT,
  'nist-rmf': NIST_RMF,
};

export function isFramework(value: unknown): value is Framework {
  return typeof value === 'string' && (FRAMEWORKS as readonly string[]).includes(value);
}

/** Whether the clause id is one of the framework's catalogue. */
export function hasClause(framework: Framework, clauseId: string): boolean {
  return CATALOGUES[framework].some((c) => c.clauseId === clauseId);
}
