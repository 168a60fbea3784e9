import { asc, eq } from 'drizzle-orm';
import type { AuditEntryRow } from '#platform';
import { auditEntries } from '../../libs/platform/src/audit/audit.schema.js';
import type { TestContext } from './app.js';

/** An organization's audit entries as stored, in chain order (for tests that tamper with or recompute the chain). */
export function auditRowsOf(ctx: TestContext, organizationId: string): Promise<AuditEntryRow[]> {
  return ctx.db.db
    .select()
    .from(auditEntries)
    .where(eq(auditEntries.organizationId, organizationId))
    .orderBy(asc(auditEntries.sequence));
}
