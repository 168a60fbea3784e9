import { count, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Db, Row, SendStatements } from './database.js';

/** Statements for a pipelined transaction, and how to read their rows into a value. */
export interface Query<T> {
  statements: SQL[];
  read(results: Row[][]): T;
}

/** A statement whose rows are not read (an insert). */
export const writeQuery = (...statements: SQL[]): Query<void> => ({ statements, read: () => undefined });

/**
 * Sends the queries' statements together (one round trip on PostgreSQL, see TransactionHost.pipelined) and reads
 * each query's share of the results.
 */
export async function sendQueries<T extends readonly unknown[]>(
  send: SendStatements,
  queries: { readonly [K in keyof T]: Query<T[K]> },
  options?: { commit?: boolean },
): Promise<T> {
  const results = await send(
    queries.flatMap((q) => q.statements),
    options,
  );
  let offset = 0;
  return queries.map((q) => {
    const share = results.slice(offset, offset + q.statements.length);
    offset += q.statements.length;
    return q.read(share);
  }) as unknown as T;
}

/**
 * One page of a list and the total its filter matches, read together: `rows` is the page's query (limit and offset
 * applied by the caller, with its joins and order), the total counts `table` under the same `where`.
 */
export async function pageWithTotal<R>(
  db: Db,
  table: PgTable,
  where: SQL | undefined,
  rows: PromiseLike<R[]>,
): Promise<{ rows: R[]; total: number }> {
  const [page, [totals]] = await Promise.all([rows, db.select({ total: count() }).from(table).where(where)]);
  return { rows: page, total: totals?.total ?? 0 };
}
