import { describe, expect, it } from 'vitest';
import { isObjectId, newId, newUnguessableId } from './object-id.js';

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

describe('newUnguessableId', () => {
  it('keeps the layout and the creation second, with fresh random bytes after it', () => {
    const at = Date.UTC(2026, 10, 26, 12, 0, 0);
    const ids = Array.from({ length: 1000 }, () => newUnguessableId(at));
    for (const id of ids) {
      expect(isObjectId(id)).toBe(true);
      expect(Number.parseInt(id.slice(0, 8), 16)).toBe(at / 1000);
    }
    expect(new Set(ids).size).toBe(1000);
    // Unlike newId, two ids made one after the other share nothing past the time (no process bytes, no counter).
    const tails = ids.map((id) => id.slice(8));
    expect(new Set(tails.map((t) => t.slice(0, 10))).size).toBeGreaterThan(990);
    const [a, b] = [Number.parseInt(tails[0]!.slice(10), 16), Number.parseInt(tails[1]!.slice(10), 16)];
    expect(Math.abs(a - b)).not.toBe(1);
  });
});
