import { describe, expect, it } from 'vitest';
import { MUTATORS } from './index.js';

describe('the mutator catalogue', () => {
  it('keeps its order, families and weights, which a seed’s requests depend on', () => {
    expect(MUTATORS.map((m) => `${m.name} ${m.family} ${m.weight}`)).toEqual([
      'valid valid 3',
      'body-one-mutation body 12',
      'json-malformed json 2',
      'json-deep json 1',
      'json-wide json 1',
      'json-long-array json 1',
      'json-proto json 1',
      'json-duplicate-keys json 1',
      'json-overflow-number json 2',
      'json-invalid-utf8 json 2',
      'json-oversized json 1',
      'unexpected-body json 1',
      'path-bad-id path 6',
      'query-bad-value query 4',
      'query-hostile query 3',
      'header-version header 3',
      'header-auth header 4',
      'header-content-type header 2',
      'header-content-encoding header 3',
      'header-oversized header 2',
      'header-misc header 2',
    ]);
  });
});
