import { describe, expect, it } from 'vitest';
import { isObjectId, newId } from './object-id.js';

describe('newId', () => {
  it('produces 24 lower-case hex characters starting with the creation second', () => {
    const at = Date.UTC(2026, 3, 11, 12, 0, 0);
    const id = newId(at);
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(Number.parseInt(id.slice(0, 8), 16)).toBe(at / 1000);
  });

  it('never repeats within a process', () => {
    const ids = new Set(Array.from({ length: 50_000 }, () => newId()));
    expect(ids.size).toBe(50_000);
  });

  it('recognises the format', () => {
    expect(isObjectId(newId())).toBe(true);
    expect(isObjectId('ABCDEF0123456789abcdef01')).toBe(false);
    expect(isObjectId('abc')).toBe(false);
    expect(isObjectId(42)).toBe(false);
  });
});
