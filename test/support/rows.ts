import type { SQL } from 'drizzle-orm';
import type { DatabaseHandle } from '#platform';

/**
 * The rows a raw query answers, whichever driver runs the database: node-postgres and PGlite answer a result with
 * `rows`, a driver answering the rows themselves is read as such.
 */
export async function rowsOf<T extends object = Record<string, unknown>>(
  ctx: { db: DatabaseHandle },
  query: SQL,
): Promise<T[]> {
  const result = (await ctx.db.db.execute(query)) as unknown as { rows?: T[] } | T[];
  if (Array.isArray(result)) return result;
  if (!Array.isArray(result.rows)) throw new Error('The query answered no rows');
  return result.rows;
}

/**
 * The number in column `n` of the one row a counting query answers (`select count(*)::int as n ...`). Fails when
 * the query answers no row or no number, so that a count can never pass by accident.
 */
export async function countOf(ctx: { db: DatabaseHandle }, query: SQL): Promise<number> {
  const rows = await rowsOf<{ n: unknown }>(ctx, query);
  if (rows.length !== 1) throw new Error(`A count answered ${rows.length} rows`);
  const n = Number(rows[0]!.n);
  if (!Number.isInteger(n)) throw new Error(`A count answered ${String(rows[0]!.n)}`);
  return n;
}
