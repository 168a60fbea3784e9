import { describe, expect, it } from 'vitest';
import { firstPeriodStart, nextSendAfter, stepOf } from './report-sender.js';

const at = (iso: string) => new Date(iso);

describe('the schedule of a report', () => {
  it('steps by a day, seven days, or a calendar month with the day clamped', () => {
    expect(stepOf('daily', at('2026-02-28T09:00:00Z')).toISOString()).toBe('2026-03-01T09:00:00.000Z');
    expect(stepOf('weekly', at('2026-12-29T09:00:00Z')).toISOString()).toBe('2027-01-05T09:00:00.000Z');
    expect(stepOf('monthly', at('2026-01-15T09:00:00Z')).toISOString()).toBe('2026-02-15T09:00:00.000Z');
    expect(stepOf('monthly', at('2026-01-31T09:00:00Z')).toISOString()).toBe('2026-02-28T09:00:00.000Z');
    expect(stepOf('monthly', at('2028-01-31T09:00:00Z')).toISOString()).toBe('2028-02-29T09:00:00.000Z');
    expect(stepOf('monthly', at('2026-12-31T09:00:00Z')).toISOString()).toBe('2027-01-31T09:00:00.000Z');
  });

  it('moves the next send past now, from the previous one', () => {
    const previous = at('2026-05-01T08:00:00Z');
    expect(nextSendAfter('daily', previous, at('2026-05-01T08:00:01Z')).toISOString()).toBe(
      '2026-05-02T08:00:00.000Z',
    );
    // Late by three and a half days: the first step still ahead.
    expect(nextSendAfter('daily', previous, at('2026-05-04T20:00:00Z')).toISOString()).toBe(
      '2026-05-05T08:00:00.000Z',
    );
    // Exactly at a step: that one is not "past now".
    expect(nextSendAfter('weekly', previous, at('2026-05-08T08:00:00Z')).toISOString()).toBe(
      '2026-05-15T08:00:00.000Z',
    );
    expect(nextSendAfter('monthly', previous, at('2026-07-10T00:00:00Z')).toISOString()).toBe(
      '2026-08-01T08:00:00.000Z',
    );
  });

  it('starts a first digest one frequency length back', () => {
    const now = at('2026-03-31T12:00:00Z');
    expect(firstPeriodStart('daily', now).toISOString()).toBe('2026-03-30T12:00:00.000Z');
    expect(firstPeriodStart('weekly', now).toISOString()).toBe('2026-03-24T12:00:00.000Z');
    expect(firstPeriodStart('monthly', now).toISOString()).toBe('2026-02-28T12:00:00.000Z');
  });
});
