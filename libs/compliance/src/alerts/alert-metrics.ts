import { Injectable } from '@nestjs/common';
import { ReviewItemsRepository, TraceRollups, TracesRepository } from '#governance';
import { IncidentsRepository } from '../incidents/incidents.repository.js';
import type { AlertComparison, AlertMetric, AlertRuleRow } from './alert.schema.js';

/** Metrics that are shares of the window's traces (0 to 1); the others are counts. */
export const RATE_METRICS: readonly AlertMetric[] = ['block_rate', 'flag_rate', 'low_confidence_rate'];

/** What each metric measures, for notifications and documentation. */
export const METRIC_LABELS: Record<AlertMetric, string> = {
  block_rate: 'block rate',
  flag_rate: 'flag rate',
  low_confidence_rate: 'low-confidence rate',
  trace_volume: 'trace volume',
  review_backlog: 'review backlog',
  overdue_incidents: 'overdue incidents',
};

/** Whether the value crosses the threshold: the rule fires while it does. */
export function crosses(value: number, comparison: AlertComparison, threshold: number): boolean {
  return comparison === 'gt' ? value > threshold : value < threshold;
}

/** A metric's value as people read it: a rate in percent, a count as an integer. */
export function formatMetric(metric: AlertMetric, value: number): string {
  return RATE_METRICS.includes(metric)
    ? `${(value * 100).toFixed(1)} %`
    : value.toLocaleString('en-GB', { maximumFractionDigits: 2 });
}

/**
 * The value of a rule's metric at `now`, from SQL aggregates, for the rule's agent or the whole
 * organization:
 * - `block_rate`, `flag_rate`: blocked (flagged) traces over all traces created in the window, from the daily
 *   rollups and the live edges (TraceRollups), so a week's window costs a few rows, not a scan;
 * - `low_confidence_rate`: traces below 0.5 confidence (counted through their partial index) over all traces of
 *   the window (from the rollups);
 * - `trace_volume`: traces created in the window;
 * - `review_backlog`: review items awaiting a decision now (pending or escalated);
 * - `overdue_incidents`: open incidents past their article 73 deadline now.
 * A rate over a window without traces is null: there is nothing to measure, and the rule keeps its state.
 * See docs/compliance-officers.md, "Alerts"; alert-metrics.spec.ts.
 */
@Injectable()
export class AlertMetrics {
  constructor(
    private readonly rollups: TraceRollups,
    private readonly traces: TracesRepository,
    private readonly reviews: ReviewItemsRepository,
    private readonly incidents: IncidentsRepository,
  ) {}

  async measure(
    rule: Pick<AlertRuleRow, 'organizationId' | 'metric' | 'agentId' | 'windowMinutes'>,
    now: Date,
  ): Promise<number | null> {
    const org = rule.organizationId;
    const from = new Date(now.getTime() - rule.windowMinutes * 60_000);
    const filter = { from, to: now, agentIds: rule.agentId ? [rule.agentId] : null };
    switch (rule.metric) {
      case 'block_rate':
      case 'flag_rate': {
        const rows = await this.rollups.summed(org, ['status'], filter);
        const total = rows.reduce((sum, r) => sum + r.traces, 0);
        const status = rule.metric === 'block_rate' ? 'blocked' : 'flagged';
        const part = rows.find((r) => r.status === status)?.traces ?? 0;
        return total === 0 ? null : part / total;
      }
      case 'trace_volume': {
        const [row] = await this.rollups.summed(org, [], filter);
        return row?.traces ?? 0;
      }
      case 'low_confidence_rate': {
        const [[all], below] = await Promise.all([
          this.rollups.summed(org, [], filter),
          this.traces.lowConfidenceCount(org, from, now, rule.agentId),
        ]);
        const total = all?.traces ?? 0;
        return total === 0 ? null : below / total;
      }
      case 'review_backlog': {
        const backlog = await this.reviews.backlog(org, rule.agentId);
        return backlog.pending + backlog.escalated;
      }
      case 'overdue_incidents':
        return this.incidents.overdueCount(org, now, rule.agentId);
    }
  }
}
