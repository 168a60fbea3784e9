import { createServer } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresHandle, type DatabaseHandle } from './database.js';
import { isDatabaseUnavailable, markConnectionError } from './database-errors.js';

/** A port nothing listens on: taken from the system, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const failure = async (run: () => Promise<unknown>): Promise<unknown> => {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
};

describe('isDatabaseUnavailable', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = createPostgresHandle(`postgres://nobody@127.0.0.1:${await closedPort()}/none`, 2);
  });
  afterAll(async () => {
    await handle.close();
  });

  it('takes a refused connection to the database for the database unavailable: a query, a transaction, a session', async () => {
    const query = await failure(() => handle.db.execute(sql`select 1`));
    const transaction = await failure(() => handle.db.transaction((tx) => tx.execute(sql`select 1`)));
    const session = await failure(() => handle.withSession((db) => db.execute(sql`select 1`)));
    for (const err of [query, transaction, session]) {
      expect(String(err) + String((err as Error).cause ?? '')).toMatch(/ECONNREFUSED/);
      expect(isDatabaseUnavailable(err)).toBe(true);
    }
  });

  it('takes node-postgres’s own errors for a broken or closed connection, also as the cause of a query’s', () => {
    for (const message of [
      'Client has encountered a connection error and is not queryable',
      'Connection terminated unexpectedly',
      'Cannot use a pool after calling end on the pool',
    ]) {
      expect(isDatabaseUnavailable(new Error(message))).toBe(true);
      expect(isDatabaseUnavailable(new Error('Failed query: rollback', { cause: new Error(message) }))).toBe(
        true,
      );
    }
    expect(isDatabaseUnavailable(new Error('Query values must be an array'))).toBe(false);
  });

  it('does not take the same code from elsewhere (an outbound HTTP call) for the database', async () => {
    const port = await closedPort();
    const fetched = await failure(() => fetch(`http://127.0.0.1:${port}/`));
    expect(((fetched as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(isDatabaseUnavailable(fetched)).toBe(false);
    // Nor a programming error, marked or not: only Node.js's system errors are.
    expect(isDatabaseUnavailable(markConnectionError(new TypeError('x is undefined')))).toBe(false);
  });
});
