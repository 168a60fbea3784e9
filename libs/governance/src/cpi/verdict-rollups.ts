import { Injectable } from '@nestjs/common';
import { Clock, TransactionHost } from '#platform';
import { DAY_MS, dayOf, ensureRolledUp, ROLLUP_GRACE_MS, startOfDay } from '../rollups/rollup-days.js';
import {
  type VerdictCountRow,
  VerdictRollupsRepository,
  type VerdictSpans,
} from './verdict-rollups.repository.js';

export type { VerdictCountRow } from './verdict-rollups.repository.js';

/**
 * The human verdicts of an organization's traces (one per trace with a decided review item or feedback, dated by
 * the later of the two), by UTC day, agent and kind, for GET /cpi and GET /cpi/analytics. Closed days come from
 * `cpi_verdict_rollups`, computed on first read (under a per-day advisory lock); the open day is counted live from
 * the items decided and the feedback given since it began. A trace's verdict only ever moves forward in time (a
 * new verdict is dated now, on the open day), so a closed day changes only by losing traces: whatever gives a trace
 * a new verdict or deletes it calls `changing` first, in its transaction, which takes the trace out of its closed
 * day's row. Provided by the review module, which the review queue, the CPI and the purge all import.
 */
@Injectable()
export class VerdictRollups {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly repo: VerdictRollupsRepository,
  ) {}

  /** The organization's verdicts counted: all of them (`key` null), and by UTC day from `since` on. */
  async byDay(organizationId: string, since: Date): Promise<VerdictCountRow[]> {
    return this.repo.counts(organizationId, await this.split(organizationId), { by: 'day', since });
  }

  /** The organization's verdicts counted by agent (`key`). */
  async byAgent(organizationId: string): Promise<VerdictCountRow[]> {
    return this.repo.counts(organizationId, await this.split(organizationId), { by: 'agent' });
  }

  /**
   * In the transaction that is about to give these traces a new verdict (a review decision, feedback) or delete
   * them, once nothing else can change their verdicts (the caller holds their review items' or traces' row locks):
   * takes their verdicts as they stand out of the rows of their rolled-up days. `ignoreReview`: the caller has just
   * decided the traces' items, which had no verdict before. A change that rolls back takes this back with it.
   */
  async changing(
    organizationId: string,
    traceIds: readonly string[],
    { ignoreReview = false }: { ignoreReview?: boolean } = {},
  ): Promise<void> {
    if (traceIds.length === 0) return;
    await this.tx.run(async () => {
      const days = await this.repo.daysOf(organizationId, traceIds, ignoreReview);
      if (days.length === 0) return;
      // Every day, closed or not: a day that closes before this commits is rolled up after it, under its lock.
      await this.tx.lock(...days.map((day) => lockKey(organizationId, day)));
      await this.repo.subtract(organizationId, traceIds, ignoreReview);
    });
  }

  /** The closed days, rolled up (the missing ones first), and where the live count starts. */
  private async split(organizationId: string): Promise<VerdictSpans> {
    const closedBefore = startOfDay(this.clock.nowMs() - ROLLUP_GRACE_MS);
    const first = await this.repo.firstVerdictAt(organizationId);
    if (first === null || startOfDay(first.getTime()) >= closedBefore) return { last: null, liveFrom: null };
    const last = dayOf(closedBefore - DAY_MS);
    await this.ensure(organizationId, dayOf(first.getTime()), last);
    return { last, liveFrom: new Date(closedBefore) };
  }

  /** Rolls up the days in [first, last] that are not yet, each under its advisory lock. */
  private async ensure(organizationId: string, first: string, last: string): Promise<void> {
    await ensureRolledUp(
      {
        tx: this.tx,
        clock: this.clock,
        days: this.repo,
        lockKey: (day) => lockKey(organizationId, day),
        // From the organization's first verdict day, every verdict is read at once (see the repository's rollUp).
        rollUp: (days) => this.repo.rollUp(organizationId, days, days[0] === first),
      },
      organizationId,
      first,
      last,
    );
  }
}

const lockKey = (organizationId: string, day: string): string => `cpi-verdicts:${organizationId}:${day}`;
