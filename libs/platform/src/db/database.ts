import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';

/** The driver-independent Drizzle type every repository uses (node-postgres and PGlite share it). */
export type Db = PgDatabase<PgQueryResultHKT>;

export interface DatabaseHandle {
  db: Db;
  driver: 'postgres' | 'pglite';
  /** Runs a query on a dedicated session (advisory locks), then releases it. */
  withSession<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /**
   * PostgreSQL only: a new client outside the pool, with the pool's connection settings, for a session that
   * lives as long as its owner (LISTEN). The caller connects and ends it.
   */
  newClient?(): pg.Client;
  close(): Promise<void>;
}

export const DATABASE = Symbol('DATABASE');

export const PGLITE_EXTENSIONS = { pg_trgm };

// Timestamps and bigints come back as strings; the application converts them where it reads them.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createPostgresHandle(url: string, max = 20): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client that errors (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = drizzlePg(pool) as unknown as Db;
  return {
    db,
    driver: 'postgres',
    async withSession(fn) {
      const client = await pool.connect();
      try {
        return await fn(drizzlePg(client) as unknown as Db);
      } finally {
        client.release();
      }
    },
    newClient: () => new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 }),
    close: () => pool.end(),
  };
}

export function pgliteHandle(client: PGlite): DatabaseHandle {
  const db = drizzlePglite(client) as unknown as Db;
  return {
    db,
    driver: 'pglite',
    withSession: (fn) => fn(db),
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
