import { Injectable } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import { newId, TransactionHost } from '#platform';
import {
  type ClauseStatus,
  type ComplianceMappingNoteRow,
  complianceMappingNotes,
  type EvidenceRef,
  type Framework,
} from './compliance-mapping.schema.js';

export interface NoteChange {
  status?: ClauseStatus;
  evidence?: string;
  evidenceRefs?: EvidenceRef[];
  reviewedBy: string | null;
  reviewedByEmail: string | null;
}

/** A framework's notes are bounded by its catalogue (writes refuse other ids); this caps the read regardless. */
const NOTES_CAP = 200;

/** The compliance_mapping_notes table; every method takes the organization id. */
@Injectable()
export class ComplianceMappingRepository {
  constructor(private readonly tx: TransactionHost) {}

  async list(organizationId: string, framework: Framework): Promise<ComplianceMappingNoteRow[]> {
    const n = complianceMappingNotes;
    return this.tx.db
      .select()
      .from(n)
      .where(and(eq(n.organizationId, organizationId), eq(n.framework, framework)))
      .limit(NOTES_CAP);
  }

  /**
   * Creates or updates the note in one statement, so concurrent writers of the same clause never collide on the
   * unique index. Omitted fields keep their value; a new note without a status is a gap.
   */
  async upsert(
    organizationId: string,
    framework: Framework,
    clauseId: string,
    change: NoteChange,
    now: Date,
  ): Promise<ComplianceMappingNoteRow> {
    const n = complianceMappingNotes;
    const stamp = {
      reviewedAt: now,
      reviewedBy: change.reviewedBy,
      reviewedByEmail: change.reviewedByEmail,
      updatedAt: now,
    };
    const [row] = await this.tx.db
      .insert(n)
      .values({
        id: newId(now.getTime()),
        organizationId,
        framework,
        clauseId,
        status: change.status ?? 'gap',
        evidence: change.evidence ?? null,
        evidenceRefs: change.evidenceRefs ?? [],
        createdAt: now,
        ...stamp,
      })
      .onConflictDoUpdate({
        target: [n.organizationId, n.framework, n.clauseId],
        set: {
          ...(change.status !== undefined && { status: change.status }),
          ...(change.evidence !== undefined && { evidence: change.evidence }),
          ...(change.evidenceRefs !== undefined && { evidenceRefs: change.evidenceRefs }),
          ...stamp,
        },
      })
      .returning();
    return row!;
  }
}
