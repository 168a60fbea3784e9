// The catalogue of mutators. Its order is part of the fuzzer's output: a batch starts with one request per
// applicable mutator in this order and then draws by weight from the same list, so a reordering changes the
// requests a seed produces (hostile.spec.ts pins the order).
import type { Mutator } from '../draft.js';
import { BODY_MUTATORS } from './body.js';
import { HEADER_MUTATORS } from './header.js';
import { JSON_MUTATORS } from './json.js';
import { QUERY_MUTATORS } from './query.js';

export const MUTATORS: Mutator[] = [
  ...BODY_MUTATORS,
  ...JSON_MUTATORS,
  ...QUERY_MUTATORS,
  ...HEADER_MUTATORS,
];
