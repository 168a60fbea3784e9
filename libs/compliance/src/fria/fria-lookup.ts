import { Injectable } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import { TransactionHost } from '#platform';
import { friaAssessments } from './fria.schema.js';

/** Whether an assessment exists in an organization, for modules that reference assessments (evidence refs). */
@Injectable()
export class FriaLookup {
  constructor(private readonly tx: TransactionHost) {}

  async exists(organizationId: string, id: string): Promise<boolean> {
    const f = friaAssessments;
    const [row] = await this.tx.db
      .select({ id: f.id })
      .from(f)
      .where(and(eq(f.organizationId, organizationId), eq(f.id, id)))
      .limit(1);
    return row !== undefined;
  }
}
