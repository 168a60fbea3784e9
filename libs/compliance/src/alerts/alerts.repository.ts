import { Injectable } from '@nestjs/common';
import { and, count, desc, eq, gte, inArray, lt, lte, type SQL } from 'drizzle-orm';
import { deleteInBatches, type PageRequest, pageWithTotal, TransactionHost } from '#platform';
import { isOrganizationLive, organizationIsLive } from '#identity';
import {
  alertRules,
  type AlertRuleRow,
  type AlertState,
  alertTransitions,
  type AlertTransitionRow,
} from './alert.schema.js';

type Insert = typeof alertRules.$inferInsert;

/** The alert tables; every method but the evaluator's claim and purge takes the organization id first. */
@Injectable()
export class AlertsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async list(
    organizationId: string,
    filter: { state?: AlertState; isActive?: boolean },
    page: PageRequest,
  ): Promise<{ rows: AlertRuleRow[]; total: number }> {
    const r = alertRules;
    const where = and(
      eq(r.organizationId, organizationId),
      filter.state ? eq(r.state, filter.state) : undefined,
      filter.isActive !== undefined ? eq(r.isActive, filter.isActive) : undefined,
    )!;
    return pageWithTotal(
      this.tx.db,
      r,
      where,
      this.tx.db
        .select()
        .from(r)
        .where(where)
        .orderBy(desc(r.createdAt), desc(r.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  async count(organizationId: string): Promise<number> {
    const [row] = await this.tx.db
      .select({ n: count() })
      .from(alertRules)
      .where(eq(alertRules.organizationId, organizationId));
    return row?.n ?? 0;
  }

  async find(organizationId: string, id: string): Promise<AlertRuleRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(alertRules)
      .where(and(eq(alertRules.organizationId, organizationId), eq(alertRules.id, id)))
      .limit(1);
    return row;
  }

  async insert(row: Insert): Promise<AlertRuleRow> {
    const [created] = await this.tx.db.insert(alertRules).values(row).returning();
    return created!;
  }

  async update(organizationId: string, id: string, set: Partial<Insert>): Promise<AlertRuleRow | undefined> {
    const [row] = await this.tx.db
      .update(alertRules)
      .set(set)
      .where(and(eq(alertRules.organizationId, organizationId), eq(alertRules.id, id)))
      .returning();
    return row;
  }

  async delete(organizationId: string, id: string): Promise<AlertRuleRow | undefined> {
    const [row] = await this.tx.db
      .delete(alertRules)
      .where(and(eq(alertRules.organizationId, organizationId), eq(alertRules.id, id)))
      .returning();
    return row;
  }

  /**
   * The evaluator's claim, across organizations (not deleted ones): up to `limit` active rules due at `now`, their next evaluation
   * moved to `next`. One statement; rows are picked with `FOR UPDATE SKIP LOCKED` and the conditions checked again
   * by the update, so concurrent evaluators (of any replica) never claim a rule twice for one due time.
   */
  async claimDue(now: Date, next: Date, limit: number): Promise<AlertRuleRow[]> {
    const r = alertRules;
    const due: SQL = and(
      eq(r.isActive, true),
      lte(r.nextEvaluationAt, now),
      organizationIsLive(r.organizationId),
    )!;
    const picked = this.tx.db
      .select({ id: r.id })
      .from(r)
      .where(due)
      .orderBy(r.nextEvaluationAt, r.id)
      .limit(limit)
      .for('update', { skipLocked: true });
    return this.tx.db
      .update(r)
      .set({ nextEvaluationAt: next })
      .where(and(inArray(r.id, picked), due))
      .returning();
  }

  /** Whether the organization exists and is not deleted (read in the transaction that writes a transition). */
  async organizationLive(organizationId: string): Promise<boolean> {
    return isOrganizationLive(this.tx.db, organizationId);
  }

  /** Records an evaluation that changed nothing: when, and the value measured. */
  async recordEvaluation(organizationId: string, id: string, at: Date, value: number | null): Promise<void> {
    await this.tx.db
      .update(alertRules)
      .set({ lastEvaluatedAt: at, lastValue: value })
      .where(and(eq(alertRules.organizationId, organizationId), eq(alertRules.id, id)));
  }

  /**
   * Moves a claimed rule from the state it was claimed in to `to`, only if it is still active, in that state, and
   * neither claimed again nor edited since (a conditional update: of two evaluators that read the same state, one
   * moves it and the other gets nothing). Call it in the transaction that writes the transition.
   */
  async transition(
    claimed: Pick<AlertRuleRow, 'organizationId' | 'id' | 'state' | 'nextEvaluationAt' | 'updatedAt'>,
    to: AlertState,
    at: Date,
    value: number,
  ): Promise<AlertRuleRow | undefined> {
    const { organizationId, id, state: from } = claimed;
    const r = alertRules;
    const [row] = await this.tx.db
      .update(r)
      .set({
        state: to,
        lastEvaluatedAt: at,
        lastValue: value,
        ...(to === 'firing' ? { lastTriggeredAt: at } : {}),
      })
      .where(
        and(
          eq(r.organizationId, organizationId),
          eq(r.id, id),
          eq(r.state, from),
          eq(r.isActive, true),
          // The claim is a token: a later claim (a stalled evaluator's rule evaluated again meanwhile) or an edit
          // of the rule (its measure changed) makes this evaluation stale.
          eq(r.nextEvaluationAt, claimed.nextEvaluationAt),
          eq(r.updatedAt, claimed.updatedAt),
        ),
      )
      .returning();
    return row;
  }

  async insertTransition(row: AlertTransitionRow): Promise<void> {
    await this.tx.db.insert(alertTransitions).values(row);
  }

  /** A rule's transitions, newest first. */
  async history(
    organizationId: string,
    alertId: string,
    page: PageRequest,
  ): Promise<{ rows: AlertTransitionRow[]; total: number }> {
    const t = alertTransitions;
    const where = and(eq(t.organizationId, organizationId), eq(t.alertId, alertId))!;
    return pageWithTotal(
      this.tx.db,
      t,
      where,
      this.tx.db
        .select()
        .from(t)
        .where(where)
        .orderBy(desc(t.createdAt), desc(t.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  /** The organization's transitions in [from, to), oldest first (at most `limit`), and how many there are. */
  async transitionsBetween(
    organizationId: string,
    from: Date,
    to: Date,
    limit: number,
  ): Promise<{ rows: AlertTransitionRow[]; total: number }> {
    const t = alertTransitions;
    const where = and(eq(t.organizationId, organizationId), gte(t.createdAt, from), lt(t.createdAt, to))!;
    const [counted] = await this.tx.db.select({ n: count() }).from(t).where(where);
    const rows = await this.tx.db.select().from(t).where(where).orderBy(t.createdAt, t.id).limit(limit);
    return { rows, total: counted?.n ?? 0 };
  }

  /**
   * Deletes transitions older than `before`, across organizations, in batches; returns how many. Ids begin with
   * their creation time (8 hex digits of seconds), so the primary key orders them by age.
   */
  async purgeTransitions(before: Date): Promise<number> {
    const cutoffId = Math.floor(before.getTime() / 1000)
      .toString(16)
      .padStart(8, '0');
    return deleteInBatches(
      this.tx.db,
      alertTransitions,
      alertTransitions.id,
      lt(alertTransitions.id, cutoffId),
      1000,
    );
  }
}
