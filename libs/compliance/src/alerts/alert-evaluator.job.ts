import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  Clock,
  AuditLog,
  DomainEvents,
  earlyClaimMs,
  JobScheduler,
  newId,
  TransactionHost,
} from '#platform';
import { IntegrationNotifier, IntegrationsRepository } from '#governance';
import type { AlertRuleRow, AlertState } from './alert.schema.js';
import { AlertMetrics, crosses, formatMetric, METRIC_LABELS, RATE_METRICS } from './alert-metrics.js';
import { AlertsRepository } from './alerts.repository.js';

/** Rules claimed per statement. */
export const ALERT_CLAIM_BATCH = 50;
/** Batches one tick evaluates at most. */
export const ALERT_TICK_BATCHES = 20;
/** Transitions are kept this long (history and digests), then purged. */
export const ALERT_TRANSITION_RETENTION_MS = 400 * 86_400_000;
const PURGE_INTERVAL_MS = 24 * 3_600_000;
const SYSTEM = { type: 'system' as const, id: 'alerts', email: null };

/** What one evaluation did. */
export type EvaluationOutcome = 'unmeasured' | 'steady' | 'triggered' | 'resolved' | 'raced';

/** The notification's words: what was measured, over what, against what. */
export function transitionText(
  rule: Pick<AlertRuleRow, 'name' | 'metric' | 'agentId' | 'comparison' | 'threshold' | 'windowMinutes'>,
  to: AlertState,
  value: number,
): { subject: string; text: string } {
  const over = ['review_backlog', 'overdue_incidents'].includes(rule.metric)
    ? 'now'
    : `over the last ${rule.windowMinutes} minutes`;
  const scope = rule.agentId ? ` for agent ${rule.agentId}` : '';
  const side = rule.comparison === 'gt' ? 'above' : 'below';
  const measured = `${METRIC_LABELS[rule.metric]}${scope} ${over} is ${formatMetric(rule.metric, value)}`;
  const threshold = formatMetric(rule.metric, rule.threshold);
  return to === 'firing'
    ? {
        subject: `Alert triggered: ${rule.name}`,
        text: `Alert "${rule.name}" triggered: the ${measured}, ${side} the threshold of ${threshold}.`,
      }
    : {
        subject: `Alert resolved: ${rule.name}`,
        text: `Alert "${rule.name}" resolved: the ${measured}, no longer ${side} the threshold of ${threshold}.`,
      };
}

/**
 * The alert evaluator: every ALERT_INTERVAL_MS (once per interval across the processes: a once-per-period job) it
 * claims the active rules that are due (one statement, `FOR UPDATE SKIP LOCKED`, the next due time moved on by the
 * interval, so that a run overlapping another, or a manual one, takes each rule once),
 * measures each rule's metric in SQL, and when the state must change, moves it with a conditional update in one
 * transaction with the transition's history row, its audit entry (`alert.triggered` or `alert.resolved`), its
 * domain event (webhooks and the event stream) and one outbox notification per integration. Of two evaluators that
 * read the same state only one moves it, so each transition is written, and notified, once.
 * See docs/compliance-officers.md, "Alerts"; test/alerts-*.e2e-spec.ts.
 */
@Injectable()
export class AlertEvaluatorJob implements OnModuleInit {
  private readonly logger = new Logger('AlertEvaluator');

  constructor(
    private readonly scheduler: JobScheduler,
    private readonly repo: AlertsRepository,
    private readonly metrics: AlertMetrics,
    private readonly notifier: IntegrationNotifier,
    private readonly integrations: IntegrationsRepository,
    private readonly audit: AuditLog,
    private readonly events: DomainEvents,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'alertIntervalMs'>,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'alerts',
      intervalMs: this.config.alertIntervalMs,
      mode: 'once-per-period',
      run: () => this.tick(),
    });
    this.scheduler.register({
      name: 'alert-transitions-purge',
      intervalMs: PURGE_INTERVAL_MS,
      mode: 'once-per-period',
      run: () => this.repo.purgeTransitions(new Date(this.clock.nowMs() - ALERT_TRANSITION_RETENTION_MS)),
    });
  }

  /**
   * One tick: claims and evaluates batch after batch while claims come back full, at most ALERT_TICK_BATCHES
   * batches (the rest are due at the next tick, so a slow tick cannot run for ever).
   */
  async tick(): Promise<Record<EvaluationOutcome | 'failed', number>> {
    const counts = { unmeasured: 0, steady: 0, triggered: 0, resolved: 0, raced: 0, failed: 0 };
    const interval = this.config.alertIntervalMs;
    for (let batch = 0; batch < ALERT_TICK_BATCHES; batch++) {
      const now = this.clock.now();
      // Due by the end of the scheduler's early margin: a period claimed a little before its end (the job runs once
      // per interval across the processes) finds due the rules evaluated one interval before, rather than leaving
      // them to the period after.
      const claimed = await this.repo.claimDue(
        new Date(now.getTime() + earlyClaimMs(interval)),
        new Date(now.getTime() + interval),
        ALERT_CLAIM_BATCH,
      );
      for (const rule of claimed) {
        try {
          counts[await this.evaluate(rule, now)] += 1;
        } catch (err) {
          counts.failed += 1;
          this.logger.warn(
            { err, alertId: rule.id, organizationId: rule.organizationId },
            'Alert rule not evaluated; it is evaluated again at the next interval',
          );
        }
      }
      if (claimed.length < ALERT_CLAIM_BATCH) break;
    }
    // A raced evaluation's claim was superseded (another evaluator claimed the rule again, or it changed).
    this.scheduler.claimsLost('alerts', counts.raced);
    if (counts.triggered + counts.resolved + counts.failed > 0)
      this.logger.log(counts, 'Alert rules evaluated');
    return counts;
  }

  /** Measures one rule and moves its state if the value says so. */
  async evaluate(rule: AlertRuleRow, now: Date): Promise<EvaluationOutcome> {
    const org = rule.organizationId;
    const value = await this.metrics.measure(rule, now);
    const want: AlertState | null =
      value === null ? null : crosses(value, rule.comparison, rule.threshold) ? 'firing' : 'ok';
    if (value === null || want === rule.state) {
      await this.repo.recordEvaluation(org, rule.id, now, value);
      return value === null ? 'unmeasured' : 'steady';
    }
    return this.tx.run(async () => {
      // The organization's write lock, then its state: a deletion either committed before (nothing is written or
      // notified) or waits for this transaction.
      await this.audit.lockOrganization(org);
      if (!(await this.repo.organizationLive(org))) return 'raced';
      const moved = await this.repo.transition(rule, want!, now, value);
      if (!moved) return 'raced';
      const type = want === 'firing' ? 'alert.triggered' : 'alert.resolved';
      const live = await this.integrations.existingIds(org, moved.integrationIds);
      const targets = moved.integrationIds.filter((id) => live.has(id));
      const data = {
        alertId: moved.id,
        name: moved.name,
        metric: moved.metric,
        agentId: moved.agentId,
        comparison: moved.comparison,
        threshold: moved.threshold,
        windowMinutes: moved.windowMinutes,
        value,
        unit: RATE_METRICS.includes(moved.metric) ? 'share' : 'count',
        state: want,
        previousState: rule.state,
        at: now.toISOString(),
      };
      await this.notifier.enqueue(org, targets, { type, ...transitionText(moved, want!, value), data });
      await this.repo.insertTransition({
        id: newId(now.getTime()),
        organizationId: org,
        alertId: moved.id,
        alertName: moved.name,
        fromState: rule.state,
        toState: want!,
        metric: moved.metric,
        agentId: moved.agentId,
        comparison: moved.comparison,
        threshold: moved.threshold,
        windowMinutes: moved.windowMinutes,
        value,
        notified: targets.length,
        createdAt: now,
      });
      await this.audit.record(
        { organizationId: org, actor: SYSTEM },
        type,
        { type: 'alert', id: moved.id },
        {
          ...data,
          notified: targets,
        },
      );
      await this.events.publish([{ organizationId: org, type, agentId: moved.agentId, data }]);
      return want === 'firing' ? 'triggered' : 'resolved';
    });
  }
}
