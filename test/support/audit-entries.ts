import { and, asc, eq } from 'drizzle-orm';
import { expect } from 'vitest';
import { type AuditEntryRow, type AuditInput, AuditLog } from '#platform';
import { auditEntries as auditTable } from '../../libs/platform/src/audit/audit.schema.js';
import type { TestContext } from './app.js';

/** An audit entry as `GET /audit` lists it. */
export interface AuditEntry {
  id: string;
  sequence: number;
  organizationId: string;
  eventType: string;
  userId: string | null;
  actor: { type: string; id: string | null; email: string | null };
  targetType: string | null;
  targetId: string | null;
  metadata: Record<string, unknown>;
  ip: string | null;
  userAgent: string | null;
  createdAt: string;
  prevHash: string;
  hash: string;
}

/**
 * The entries of one event type that the organization of `token`'s session reads over the API: newest first, one
 * page (`query` may ask for another `limit`).
 */
export async function auditEntries(
  ctx: TestContext,
  token: string,
  eventType: string,
  query: Record<string, string> = {},
): Promise<AuditEntry[]> {
  const res = await ctx.get('/api/v1/audit', { token, query: { eventType, ...query } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as AuditEntry[];
}

/**
 * An organization's audit entries as stored, in chain order, whatever the API shows; only those of `eventType`, and
 * only those about `targetId`, when given.
 */
export function auditEntriesOf(
  ctx: TestContext,
  organizationId: string,
  eventType?: string,
  targetId?: string,
): Promise<AuditEntryRow[]> {
  const where = [eq(auditTable.organizationId, organizationId)];
  if (eventType !== undefined) where.push(eq(auditTable.eventType, eventType));
  if (targetId !== undefined) where.push(eq(auditTable.targetId, targetId));
  return ctx.db.db
    .select()
    .from(auditTable)
    .where(and(...where))
    .orderBy(asc(auditTable.sequence));
}

/** Appends an entry to the organization's chain as the system, straight through the audit log. */
export function appendEntry(
  ctx: TestContext,
  organizationId: string,
  eventType: string,
  extra: Partial<AuditInput> = {},
): Promise<AuditEntryRow> {
  return ctx.service(AuditLog).append({
    organizationId,
    eventType,
    actor: { type: 'system', id: null, email: null },
    ...extra,
  });
}

export interface AppendManyOptions {
  /** How many entries are appended at once; each batch waits for the one before. */
  concurrency?: number;
  /** How far the clock moves before each batch (0: entries may share a time). */
  stepMs?: number;
  eventType?: string;
  /** The metadata of the n-th entry (from 0). */
  metadata?: (n: number) => Record<string, unknown>;
}

/** Appends `count` entries to the organization's chain, as the system. */
export async function appendMany(
  ctx: TestContext,
  organizationId: string,
  count: number,
  { concurrency = 1, stepMs = 0, eventType = 'test.bulk', metadata = (n) => ({ n }) }: AppendManyOptions = {},
): Promise<void> {
  for (let done = 0; done < count; done += concurrency) {
    if (stepMs > 0) ctx.clock.advance(stepMs);
    const size = Math.min(concurrency, count - done);
    await Promise.all(
      Array.from({ length: size }, (_, i) =>
        appendEntry(ctx, organizationId, eventType, { metadata: metadata(done + i) }),
      ),
    );
  }
}
