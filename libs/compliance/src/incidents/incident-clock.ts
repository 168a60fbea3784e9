import type { IncidentCategory, IncidentStatus } from './incident.schema.js';

export const INCIDENT_CATEGORIES: readonly IncidentCategory[] = [
  'death',
  'widespread_infringement',
  'critical_infrastructure',
  'other',
];
export const INCIDENT_STATUSES: readonly IncidentStatus[] = ['open', 'reported', 'closed'];

const DAY_MS = 86_400_000;

/**
 * Days from awareness to the report's deadline (EU AI Act article 73): 10 after a death, 2 for a
 * widespread infringement or a serious disruption of critical infrastructure, 15 otherwise. Whole 24-hour days:
 * the deadline is an instant, the same in every time zone.
 * See docs/compliance-officers.md, "Incidents (EU AI Act article 73)"; incident-clock.spec.ts.
 */
export const REPORTING_DAYS: Record<IncidentCategory, number> = {
  death: 10,
  widespread_infringement: 2,
  critical_infrastructure: 2,
  other: 15,
};

export function deadlineOf(category: IncidentCategory, awareAt: Date): Date {
  return new Date(awareAt.getTime() + REPORTING_DAYS[category] * DAY_MS);
}

/** Moves allowed by PATCH: open → reported or closed, reported → closed. The same status again is no move. */
const MOVES: Record<IncidentStatus, readonly IncidentStatus[]> = {
  open: ['reported', 'closed'],
  reported: ['closed'],
  closed: [],
};

export function canMove(from: IncidentStatus, to: IncidentStatus): boolean {
  return MOVES[from].includes(to);
}

/**
 * The clock of an incident at `now`: while it is open, the whole seconds left to its deadline (0 once past) and
 * whether it is overdue; once reported or closed the clock has stopped (null, not overdue).
 */
export function clockOf(
  status: IncidentStatus,
  deadlineAt: Date,
  now: Date,
): { timeLeftSeconds: number | null; overdue: boolean } {
  if (status !== 'open') return { timeLeftSeconds: null, overdue: false };
  const leftMs = deadlineAt.getTime() - now.getTime();
  return { timeLeftSeconds: Math.max(0, Math.floor(leftMs / 1000)), overdue: leftMs < 0 };
}
