import { describe, expect, it } from 'vitest';
import { keyNameFor, normaliseDescription } from './agents.service.js';

describe('normaliseDescription', () => {
  it('stores blank and null as no description', () => {
    expect(normaliseDescription('')).toBeNull();
    expect(normaliseDescription(null)).toBeNull();
    expect(normaliseDescription(undefined)).toBeNull();
    expect(normaliseDescription('Triage')).toBe('Triage');
  });
});

describe('keyNameFor', () => {
  it('fits an agent name of up to 200 characters into the 120 of api_keys.name', () => {
    expect(keyNameFor('Bot')).toBe('Bot');
    expect(keyNameFor('n'.repeat(200))).toHaveLength(120);
  });
});
