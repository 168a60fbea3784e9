import { describe, expect, it } from 'vitest';
import { bearerMatches, metricsTokenDigest } from './metrics-endpoint.js';

const TOKEN = 'a-metrics-token-of-at-least-32-characters';

describe('the metrics bearer check', () => {
  const expected = metricsTokenDigest(TOKEN);

  it('accepts the token after Bearer, whatever the scheme case', () => {
    expect(bearerMatches(`Bearer ${TOKEN}`, expected)).toBe(true);
    expect(bearerMatches(`bearer ${TOKEN}`, expected)).toBe(true);
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['the token without its scheme', TOKEN],
    ['another scheme', `Basic ${TOKEN}`],
    ['a wrong token of the same length', `Bearer ${'x'.repeat(TOKEN.length)}`],
    ['a prefix of the token', `Bearer ${TOKEN.slice(0, -1)}`],
    ['the token and more', `Bearer ${TOKEN}x`],
    ['two tokens', `Bearer ${TOKEN} ${TOKEN}`],
    ['an empty bearer', 'Bearer '],
  ])('refuses %s', (_what, header) => {
    expect(bearerMatches(header, expected)).toBe(false);
  });

  it('never matches an empty token, even against the digest of an empty string', () => {
    expect(bearerMatches(undefined, metricsTokenDigest(''))).toBe(false);
    expect(bearerMatches('Bearer ', metricsTokenDigest(''))).toBe(false);
  });
});
