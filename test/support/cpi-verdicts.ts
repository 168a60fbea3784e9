/**
 * The CPI's verdict figures computed the long way, for tests to compare GET /cpi and GET /cpi/analytics with (their
 * verdict rollups, test/medium/cpi-rollups.medium-spec.ts): from the review items and feedback as they stand, one
 * verdict per trace with a decided item or feedback, the later of the two deciding and dating it.
 */
import { sql } from 'drizzle-orm';
import type { DatabaseHandle } from '#platform';

const DAY_MS = 86_400_000;
const dayOf = (date: Date) => date.toISOString().slice(0, 10);
const round4 = (value: number) => Math.round(value * 10_000) / 10_000;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** The organization's verdict figures as GET /cpi shows them (totals, the 30-day trend to today) and per agent. */
export async function expectedVerdicts(db: DatabaseHandle, organizationId: string, nowMs: number) {
  const result = (await db.db.execute(sql`with
    review as (select trace_id, agent_id, status, decided_at as at from review_items
      where organization_id = ${organizationId} and status in ('approved', 'rejected')),
    feedback as (select trace_id, agent_id, status_before, action, last_at as at from trace_feedback
      where organization_id = ${organizationId}),
    verdict as (
      select coalesce(f.agent_id, r.agent_id) as agent_id,
        (r.trace_id is not null or f.status_before = 'flagged') as flagged,
        case when f.trace_id is not null and (r.trace_id is null or f.at >= r.at)
          then f.action = 'correct' else r.status = 'rejected' end as flag_was_right,
        coalesce(f.action = 'correct', false) as overridden,
        greatest(f.at, r.at) as at
      from review r full outer join feedback f on f.trace_id = r.trace_id
    )
    select to_char(at at time zone 'UTC', 'YYYY-MM-DD') as day, agent_id, count(*)::int as verdicts,
      count(*) filter (where flagged)::int as decided_flags,
      count(*) filter (where flagged and flag_was_right)::int as correct_flags,
      count(*) filter (where flagged and not flag_was_right)::int as false_flags,
      count(*) filter (where overridden)::int as overrides
    from verdict group by 1, 2`)) as unknown as {
    rows: {
      day: string;
      agent_id: string;
      verdicts: number;
      decided_flags: number;
      correct_flags: number;
      false_flags: number;
      overrides: number;
    }[];
  };
  const rows = result.rows;
  const summed = (of: typeof rows) => ({
    verdicts: sum(of.map((r) => r.verdicts)),
    decidedFlags: sum(of.map((r) => r.decided_flags)),
    correctFlags: sum(of.map((r) => r.correct_flags)),
    falseFlags: sum(of.map((r) => r.false_flags)),
    overrides: sum(of.map((r) => r.overrides)),
  });
  const rate = (n: number, d: number) => (d > 0 ? round4(n / d) : null);
  const total = summed(rows);
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  return {
    totals: {
      humanVerdicts: total.verdicts,
      decidedFlags: total.decidedFlags,
      correctFlags: total.correctFlags,
      falseFlags: total.falseFlags,
      humanOverrides: total.overrides,
    },
    trend: Array.from({ length: 30 }, (_, i) => {
      const date = dayOf(new Date(today - (29 - i) * DAY_MS));
      const day = summed(rows.filter((r) => r.day === date));
      return {
        date,
        humanVerdicts: day.verdicts,
        decidedFlags: day.decidedFlags,
        correctFlagRate: rate(day.correctFlags, day.decidedFlags),
        falseFlagRate: rate(day.falseFlags, day.decidedFlags),
        humanOverrideRate: rate(day.overrides, day.verdicts),
      };
    }),
    byAgent: new Map(
      [...new Set(rows.map((r) => r.agent_id))].map((agentId) => [
        agentId,
        summed(rows.filter((r) => r.agent_id === agentId)).verdicts,
      ]),
    ),
  };
}
