import { Injectable } from '@nestjs/common';
import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { type SubjectErasureRow, subjectErasures, subjectHolds } from './subject.schema.js';

export type SubjectHoldRow = typeof subjectHolds.$inferSelect;

/** Legal holds and erasure jobs of subjects; every method takes the organization id first. */
@Injectable()
export class SubjectsRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Serializes what concerns one subject (a hold, an erasure's request and each of its batches) until the caller's
   * transaction ends, so that a hold placed during an erasure stops its next batch.
   */
  async lockSubject(organizationId: string, subjectHash: string): Promise<void> {
    await this.tx.db.execute(
      sql`select pg_advisory_xact_lock(hashtextextended(${`subject:${organizationId}:${subjectHash}`}, 0))`,
    );
  }

  async hold(organizationId: string, subjectHash: string): Promise<SubjectHoldRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(subjectHolds)
      .where(and(eq(subjectHolds.organizationId, organizationId), eq(subjectHolds.subjectHash, subjectHash)));
    return row;
  }

  /** Places the hold; returns false when one was already there. */
  async insertHold(row: SubjectHoldRow): Promise<boolean> {
    const inserted = await this.tx.db
      .insert(subjectHolds)
      .values(row)
      .onConflictDoNothing()
      .returning({ subjectHash: subjectHolds.subjectHash });
    return inserted.length > 0;
  }

  /** Lifts the hold; returns false when there was none. */
  async deleteHold(organizationId: string, subjectHash: string): Promise<boolean> {
    const deleted = await this.tx.db
      .delete(subjectHolds)
      .where(and(eq(subjectHolds.organizationId, organizationId), eq(subjectHolds.subjectHash, subjectHash)))
      .returning({ subjectHash: subjectHolds.subjectHash });
    return deleted.length > 0;
  }

  /** The subject hashes of the organization on hold, as a subquery (the retention purge keeps their traces). */
  heldQuery(organizationId: string): SQL {
    return sql`(select ${subjectHolds.subjectHash} from ${subjectHolds} where ${subjectHolds.organizationId} = ${organizationId})`;
  }

  async insertErasure(row: SubjectErasureRow): Promise<void> {
    await this.tx.db.insert(subjectErasures).values(row);
  }

  async erasure(organizationId: string, id: string): Promise<SubjectErasureRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(subjectErasures)
      .where(and(eq(subjectErasures.organizationId, organizationId), eq(subjectErasures.id, id)));
    return row;
  }

  /** The subject's latest erasure. */
  async latestErasure(organizationId: string, subjectHash: string): Promise<SubjectErasureRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(subjectErasures)
      .where(
        and(eq(subjectErasures.organizationId, organizationId), eq(subjectErasures.subjectHash, subjectHash)),
      )
      .orderBy(desc(subjectErasures.startedAt), desc(subjectErasures.id))
      .limit(1);
    return row;
  }

  /** Adds one batch's counts, in the batch's transaction: a run resumed after a crash goes on counting. */
  async addErased(organizationId: string, id: string, traces: number, events: number): Promise<void> {
    await this.tx.db
      .update(subjectErasures)
      .set({
        tracesErased: sql`${subjectErasures.tracesErased} + ${traces}`,
        eventsChanged: sql`${subjectErasures.eventsChanged} + ${events}`,
      })
      .where(and(eq(subjectErasures.organizationId, organizationId), eq(subjectErasures.id, id)));
  }

  async finishErasure(
    organizationId: string,
    id: string,
    at: Date,
    stoppedByHold: boolean,
  ): Promise<SubjectErasureRow | undefined> {
    const [row] = await this.tx.db
      .update(subjectErasures)
      .set({ status: 'done', finishedAt: at, stoppedByHold })
      .where(
        and(
          eq(subjectErasures.organizationId, organizationId),
          eq(subjectErasures.id, id),
          eq(subjectErasures.status, 'running'),
        ),
      )
      .returning();
    return row;
  }
}
