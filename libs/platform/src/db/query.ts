import type { SQL } from 'drizzle-orm';
import type { Row, SendStatements } from './database.js';

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
