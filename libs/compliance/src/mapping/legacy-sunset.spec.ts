import { describe, expect, it } from 'vitest';
import { legacyNotesSunset } from './legacy-sunset.js';

const DAY_MS = 86_400_000;

describe('legacyNotesSunset', () => {
  it('is the legacy mount’s sunset (2027-04-12) while that is at least 90 days ahead', () => {
    // 2026-11-25 → 2027-04-12 is 5 + 31 + 31 + 28 + 31 + 12 = 138 days
    const now = new Date('2026-11-25T06:00:00.000Z');
    expect(legacyNotesSunset(now).toISOString()).toBe('2027-04-12T00:00:00.000Z');
    // 2027-01-12 → 2027-04-12 is 19 + 28 + 31 + 12 = 90 days from midnight, under 90 from 23:59: too close, so
    // 91 days after 2027-01-12 = 2027-04-13
    expect(legacyNotesSunset(new Date('2027-01-12T23:59:00.000Z')).toISOString()).toBe(
      '2027-04-13T00:00:00.000Z',
    );
  });

  it('is midnight 91 days after today once the fixed date is too close or past', () => {
    const now = new Date('2027-06-01T13:30:00.000Z');
    // 2027-06-01 + 91 days = 30 (June) + 31 (July) + 30 (Aug) → 2027-08-31
    expect(legacyNotesSunset(now).toISOString()).toBe('2027-08-31T00:00:00.000Z');
    expect(legacyNotesSunset(now).getTime() - now.getTime()).toBeGreaterThanOrEqual(90 * DAY_MS);
  });

  it('is always at least 90 days ahead', () => {
    for (
      let t = Date.parse('2026-01-01T00:00:00Z');
      t < Date.parse('2028-01-01T00:00:00Z');
      t += 7 * 3_600_000 + 1
    ) {
      expect(legacyNotesSunset(new Date(t)).getTime() - t).toBeGreaterThanOrEqual(90 * DAY_MS);
    }
  });
});
