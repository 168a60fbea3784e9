import { describe, expect, it } from 'vitest';
import { childrenFirst } from './organization-data.js';

describe('childrenFirst', () => {
  it('puts a table before every table it references, by name otherwise', () => {
    expect(childrenFirst(['c', 'b', 'a'], [])).toEqual(['a', 'b', 'c']);
    // review_items references traces, traces references agents.
    expect(
      childrenFirst(
        ['agents', 'review_items', 'traces', 'webhooks'],
        [
          ['review_items', 'traces'],
          ['traces', 'agents'],
          ['memberships', 'organizations'],
        ],
      ),
    ).toEqual(['review_items', 'traces', 'agents', 'webhooks']);
  });

  it('ends on a cycle instead of looping', () => {
    expect(
      childrenFirst(
        ['a', 'b'],
        [
          ['a', 'b'],
          ['b', 'a'],
        ],
      ).sort(),
    ).toEqual(['a', 'b']);
  });
});
