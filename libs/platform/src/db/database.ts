import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { markConnectionError } from './database-errors.js';
import { inlineSql } from './inline-sql.js';

/** The driver-independent Drizzle type every repository uses (node-postgres and PGlite share it). */
export type Db = PgDatabase<PgQueryResultHKT>;

export type Row = Record<string, unknown>;

/**
 * Sends statements of a pipelined transaction together and answers each one's rows; `commit` sends COMMIT with
 * them (nothing may be sent after it).
 */
export type SendStatements = (statements: SQL[], options?: { commit?: boolean }) => Promise<Row[][]>;

export interface DatabaseHandle {
  db: Db;
  /**
   * A transaction written as a few round trips (see TransactionHost.pipelined): on PostgreSQL each `send` is one
   * simple-protocol query (BEGIN travels with the first, COMMIT with the one marked `commit`); on PGlite the
   * statements run one after another in an ordinary transaction.
   */
  pipelinedTransaction<T>(fn: (send: SendStatements) => Promise<T>): Promise<T>;
  driver: 'postgres' | 'pglite';
  /** Runs a query on a dedicated session (advisory locks), then releases it. */
  withSession<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /**
   * PostgreSQL only: a new client outside the pool, with the pool's connection settings, for a session that
   * lives as long as its owner (LISTEN). The caller connects and ends it.
   */
  newClient?(): pg.Client;
  /**
   * Rows as arrays of their columns' text, for bulk reads that parse nothing they do not need (audit verification
   * and export): every selected column must be of a text type (cast it) or null. Outside any transaction.
   */
  textRows(text: string, params: readonly (string | number)[]): Promise<(string | null)[][]>;
  /** The connections now, for the pool gauge: node-postgres's pool, or PGlite's one in-process connection. */
  poolStats?(): PoolStats;
  /** Calls `listener` for each query that fails (the query-error count); returns what stops it. */
  onQueryError?(listener: () => void): () => void;
  close(): Promise<void>;
}

export interface PoolStats {
  total: number;
  /** Open and not lent to a query or a transaction (node-postgres only). */
  idle?: number;
  /** Callers waiting for a connection (node-postgres only). */
  waiting?: number;
}

/** Who hears of failed queries: the handle's listeners, called without arguments. */
class QueryFailures {
  private readonly listeners = new Set<() => void>();

  readonly notify = (): void => {
    for (const listener of this.listeners) listener();
  };

  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
}

/**
 * Wraps a node-postgres client's `query` so that each failure is heard: a callback's error (pg-pool's `query` passes
 * one) or a returned promise's rejection. The caller still gets the error as before.
 */
function observePgQueries(client: pg.Client | pg.PoolClient, failures: QueryFailures): void {
  const target = client as unknown as { query: (...args: unknown[]) => unknown };
  const query = target.query;
  // A failure is counted, and marked when it is the connection's (markConnectionError: the error object itself is
  // marked, before the caller's own handlers see it).
  const failed = (err: unknown) => {
    markConnectionError(err);
    failures.notify();
  };
  target.query = function (this: unknown, ...args: unknown[]) {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = function (this: unknown, err: unknown, ...rest: unknown[]) {
        if (err) failed(err);
        return (callback as (...a: unknown[]) => unknown).call(this, err, ...rest);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args);
    if (result instanceof Promise) result.catch(failed);
    return result;
  };
}

/** Wraps one of PGlite's promise methods so that the rejections `isFailure` picks are heard. */
function observePgliteMethod(
  client: PGlite,
  method: 'query' | 'exec' | 'transaction',
  failures: QueryFailures,
  isFailure: (err: unknown) => boolean = () => true,
): void {
  const target = client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = target[method]!;
  const onRejected = (err: unknown) => {
    if (isFailure(err)) failures.notify();
  };
  target[method] = function (this: unknown, ...args: unknown[]) {
    const result = original.apply(this, args);
    result.catch(onRejected);
    return result;
  };
}

/**
 * An error the database server (or PGlite) reported, or one that wraps it (Drizzle's "Failed query" keeps it as its
 * `cause`): a SQLSTATE code and a severity, not an application's error.
 */
function isDatabaseError(err: unknown): boolean {
  for (
    let e = err, depth = 0;
    e && typeof e === 'object' && depth < 4;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const { code, severity } = e as { code?: unknown; severity?: unknown };
    if (typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return true;
  }
  return false;
}

export const DATABASE = Symbol('DATABASE');

export const PGLITE_EXTENSIONS = { pg_trgm };

// Timestamps and bigints come back as strings; the application converts them where it reads them.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/**
 * node-postgres's client, whose failures to connect (refused, reset, a host name that does not resolve) are marked as
 * the database's on their way out (markConnectionError): the request that meets one answers 503 with Retry-After, not
 * 500. Its queries' failures are marked by observePgQueries.
 */
class MarkingClient extends pg.Client {
  // Both forms of pg.Client#connect: a callback, or a promise.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(...args: any[]): any {
    const [callback] = args as [((err: unknown) => void) | undefined];
    if (typeof callback === 'function') {
      return super.connect((err: Error) => callback(markConnectionError(err)));
    }
    const connecting = super.connect();
    connecting.catch(markConnectionError);
    return connecting;
  }
}

export function createPostgresHandle(url: string, max = 20): DatabaseHandle {
  const pool = new pg.Pool({
    Client: MarkingClient,
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client that errors (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const failures = new QueryFailures();
  // Every query goes through one of the pool's clients (pool.query too), connected before its first query.
  pool.on('connect', (client) => {
    observePgQueries(client, failures);
    // The pool listens for errors of its idle clients only. A client lent to a transaction whose connection fails
    // (PostgreSQL restarted, the backend terminated) emits 'error' with nobody listening, which would end the
    // process: the query in flight rejects with the error anyway, and the pool drops the client when it is released.
    client.on('error', () => undefined);
  });
  const db = drizzlePg(pool) as unknown as Db;
  return {
    db,
    driver: 'postgres',
    pipelinedTransaction: (fn) => pipelinedPgTransaction(pool, fn),
    async withSession(fn) {
      const client = await pool.connect();
      try {
        return await fn(drizzlePg(client) as unknown as Db);
      } finally {
        client.release();
      }
    },
    // Keepalive: a listener on a half-open connection would otherwise believe it still hears notifications.
    newClient: () => {
      const client = new pg.Client({
        connectionString: url,
        connectionTimeoutMillis: 10_000,
        keepAlive: true,
      });
      observePgQueries(client, failures);
      return client;
    },
    textRows: async (text, params) =>
      (await pool.query<(string | null)[]>({ text, values: [...params], rowMode: 'array' })).rows,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    onQueryError: (listener) => failures.listen(listener),
    close: () => pool.end(),
  };
}

/**
 * One pooled connection; every `send` is one simple-protocol query of the statements (parameters inlined as
 * literals), BEGIN prepended to the first and COMMIT appended when asked. PostgreSQL runs a multi-statement query
 * in order and skips the rest after an error, which leaves the transaction aborted: it is then rolled back.
 */
async function pipelinedPgTransaction<T>(
  pool: pg.Pool,
  fn: (send: SendStatements) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let begun = false;
  let ended = false;
  const send: SendStatements = async (statements, options = {}) => {
    if (ended) throw new Error('The pipelined transaction has already committed');
    const texts = statements.map(inlineSql);
    const lead = begun ? 0 : 1;
    if (!begun) texts.unshift('BEGIN');
    if (options.commit) texts.push('COMMIT');
    begun = true;
    ended = options.commit === true;
    // Each separator on a line of its own: nothing a statement ends with (a comment) can swallow the next one.
    const result = (await client.query(texts.join('\n;\n'))) as unknown as pg.QueryResult | pg.QueryResult[];
    const results = Array.isArray(result) ? result : [result];
    if (results.length !== texts.length) {
      throw new Error(`A pipelined query answered ${results.length} results for ${texts.length} statements`);
    }
    if (options.commit && results[results.length - 1]!.command !== 'COMMIT') {
      throw new Error('The pipelined transaction did not commit');
    }
    return results.slice(lead, lead + statements.length).map((r) => r.rows as Row[]);
  };
  try {
    const value = await fn(send);
    if (begun && !ended) {
      ended = true;
      await client.query('COMMIT');
    }
    client.release();
    return value;
  } catch (err) {
    let broken: Error | undefined;
    if (begun) {
      // After a failed COMMIT there is no transaction left, and ROLLBACK only warns.
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
    }
    client.release(broken);
    throw err;
  }
}

/** One set of listeners per PGlite instance, however many handles are made on it. */
const pgliteFailures = new WeakMap<PGlite, QueryFailures>();

function pgliteQueryFailures(client: PGlite): QueryFailures {
  let failures = pgliteFailures.get(client);
  if (!failures) {
    failures = new QueryFailures();
    observePgliteMethod(client, 'query', failures);
    observePgliteMethod(client, 'exec', failures);
    // A transaction's own statements are not `query` calls: what fails among them rejects the transaction, which
    // also rejects with the application's errors; only the database's count.
    observePgliteMethod(client, 'transaction', failures, isDatabaseError);
    pgliteFailures.set(client, failures);
  }
  return failures;
}

export function pgliteHandle(client: PGlite): DatabaseHandle {
  const failures = pgliteQueryFailures(client);
  const db = drizzlePglite(client) as unknown as Db;
  return {
    db,
    driver: 'pglite',
    // In-process: there is no round trip to save, so the statements run one by one in a transaction, which
    // commits when `fn` returns (not with the send marked `commit`); nothing may be sent after that send.
    pipelinedTransaction: (fn) =>
      db.transaction((tx) => {
        let ended = false;
        return fn(async (statements, options = {}) => {
          if (ended) throw new Error('The pipelined transaction has already committed');
          ended = options.commit === true;
          const results: Row[][] = [];
          for (const statement of statements) {
            results.push(((await tx.execute(statement)) as unknown as { rows: Row[] }).rows);
          }
          return results;
        });
      }),
    withSession: (fn) => fn(db),
    textRows: async (text, params) =>
      (await client.query<(string | null)[]>(text, [...params], { rowMode: 'array' })).rows,
    poolStats: () => ({ total: 1 }),
    onQueryError: (listener) => failures.listen(listener),
    close: () => client.close(),
  };
}

export async function createPgliteHandle(dataDir: string): Promise<DatabaseHandle> {
  const dir = join(dataDir, 'pgdata');
  mkdirSync(dir, { recursive: true });
  const client = await PGlite.create({ dataDir: dir, extensions: PGLITE_EXTENSIONS });
  return pgliteHandle(client);
}

export async function createDatabaseHandle(opts: {
  databaseUrl?: string;
  dataDir: string;
  poolMax?: number;
}): Promise<DatabaseHandle> {
  return opts.databaseUrl
    ? createPostgresHandle(opts.databaseUrl, opts.poolMax)
    : createPgliteHandle(opts.dataDir);
}
