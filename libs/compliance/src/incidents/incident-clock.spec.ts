import { describe, expect, it } from 'vitest';
import { canMove, clockOf, deadlineOf } from './incident-clock.js';

describe('incident clock', () => {
  const aware = new Date('2026-03-01T10:00:00.000Z');

  it('sets the article 73 deadline by category', () => {
    expect(deadlineOf('death', aware).toISOString()).toBe('2026-03-11T10:00:00.000Z');
    expect(deadlineOf('widespread_infringement', aware).toISOString()).toBe('2026-03-03T10:00:00.000Z');
    expect(deadlineOf('critical_infrastructure', aware).toISOString()).toBe('2026-03-03T10:00:00.000Z');
    expect(deadlineOf('other', aware).toISOString()).toBe('2026-03-16T10:00:00.000Z');
  });

  it('counts whole seconds down while open, then overdue at 0; stops once reported or closed', () => {
    const deadline = new Date('2026-03-03T10:00:00.000Z');
    expect(clockOf('open', deadline, new Date('2026-03-03T09:59:58.500Z'))).toEqual({
      timeLeftSeconds: 1,
      overdue: false,
    });
    expect(clockOf('open', deadline, deadline)).toEqual({ timeLeftSeconds: 0, overdue: false });
    expect(clockOf('open', deadline, new Date('2026-03-03T10:00:00.001Z'))).toEqual({
      timeLeftSeconds: 0,
      overdue: true,
    });
    expect(clockOf('reported', deadline, new Date('2026-04-01T00:00:00.000Z'))).toEqual({
      timeLeftSeconds: null,
      overdue: false,
    });
  });

  it('allows open → reported → closed and open → closed only', () => {
    expect(canMove('open', 'reported')).toBe(true);
    expect(canMove('open', 'closed')).toBe(true);
    expect(canMove('reported', 'closed')).toBe(true);
    expect(canMove('reported', 'open')).toBe(false);
    expect(canMove('closed', 'open')).toBe(false);
    expect(canMove('closed', 'reported')).toBe(false);
  });
});
