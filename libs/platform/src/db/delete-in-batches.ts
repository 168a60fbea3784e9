import { inArray, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from './database.js';

/**
 * Deletes the rows `where` selects, `batch` at a time (each batch its own statement, so no long lock and no huge
 * transaction), until fewer than `batch` remain; returns how many were deleted. For the retention purges.
 */
export async function deleteInBatches(
  db: Db,
  table: PgTable,
  id: PgColumn,
  where: SQL | undefined,
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = db.select({ id }).from(table).where(where).limit(batch);
    const deleted = await db.delete(table).where(inArray(id, ids)).returning({ id });
    total += deleted.length;
    if (deleted.length < batch) return total;
  }
}
