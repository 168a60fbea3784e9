import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { type MigrationMeta, readMigrationFiles } from 'drizzle-orm/migrator';
import type { DatabaseHandle, Db, Row } from './database.js';

/** The generated migrations: `drizzle/` at the repository root, copied beside the build output as `dist/drizzle`. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../../drizzle', import.meta.url));

/**
 * The first line of a migration that cannot run in a transaction (CREATE INDEX CONCURRENTLY, which builds an index
 * without blocking writes to its table). Its statements run one by one, each on its own, and the migration is
 * recorded once all of them have succeeded; one that fails midway is run again from its start on the next attempt,
 * so every statement must be safe to repeat (`CREATE INDEX CONCURRENTLY IF NOT EXISTS`). An index that an
 * interrupted build left invalid is dropped and built again rather than skipped by IF NOT EXISTS.
 */
export const OUTSIDE_TRANSACTION = '-- migrate: outside-transaction';

// An arbitrary constant shared by every replica: the advisory lock that serialises migrations.
const MIGRATION_LOCK_KEY = 7_240_411;
const LOCK_POLL_MAX_MS = 500;

// Runs already queued per handle. PGlite has one session, where advisory locks are re-entrant, so callers in
// the same process are serialised here as well.
const queued = new WeakMap<DatabaseHandle, Promise<void>>();

/**
 * Applies pending migrations under a session-level advisory lock, so replicas starting together never race:
 * the first one migrates, the others wait and then find nothing to do. Migrations are recorded in drizzle's own
 * table (`drizzle.__drizzle_migrations`), as drizzle's migrator does, and pending ones run in one transaction,
 * except those marked OUTSIDE_TRANSACTION.
 */
export function runMigrations(handle: DatabaseHandle, migrationsFolder = MIGRATIONS_DIR): Promise<void> {
  const run = (queued.get(handle) ?? Promise.resolve()).then(() => migrateLocked(handle, migrationsFolder));
  queued.set(
    handle,
    run.catch(() => undefined),
  );
  return run;
}

async function migrateLocked(handle: DatabaseHandle, migrationsFolder: string): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder });
  await handle.withSession(async (db) => {
    await lockMigrations(db);
    try {
      await applyPending(db, migrations);
    } finally {
      await db.execute(sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
    }
  });
}

/**
 * Takes the migration lock, polling rather than waiting in pg_advisory_lock: a replica blocked in that call holds
 * a snapshot, which CREATE INDEX CONCURRENTLY in the migrating replica waits for, while the blocked replica waits
 * for the lock that replica holds (a deadlock PostgreSQL breaks by failing one of them).
 */
async function lockMigrations(db: Db): Promise<void> {
  for (let delay = 20; ; delay = Math.min(delay * 2, LOCK_POLL_MAX_MS)) {
    const [row] = rowsOf(await db.execute(sql`select pg_try_advisory_lock(${MIGRATION_LOCK_KEY}) as locked`));
    if (row?.locked === true) return;
    await sleep(delay);
  }
}

async function applyPending(db: Db, migrations: MigrationMeta[]): Promise<void> {
  await db.execute(sql`create schema if not exists "drizzle"`);
  await db.execute(sql`create table if not exists "drizzle"."__drizzle_migrations" (
      id serial primary key, hash text not null, created_at bigint)`);
  const [last] = rowsOf(
    await db.execute(
      sql`select created_at from "drizzle"."__drizzle_migrations" order by created_at desc limit 1`,
    ),
  );
  const pending = migrations.filter((m) => last === undefined || Number(last.created_at) < m.folderMillis);
  let batch: MigrationMeta[] = [];
  // Consecutive migrations share one transaction, as with drizzle's migrator: all of them apply, or none.
  const flush = async (): Promise<void> => {
    const migrations = batch;
    batch = [];
    if (migrations.length === 0) return;
    await db.transaction(async (tx) => {
      for (const migration of migrations) {
        for (const statement of migration.sql) await tx.execute(sql.raw(statement));
        await record(tx as unknown as Db, migration);
      }
    });
  };
  for (const migration of pending) {
    if (!migration.sql[0]?.trimStart().startsWith(OUTSIDE_TRANSACTION)) {
      batch.push(migration);
      continue;
    }
    await flush();
    for (const statement of migration.sql) {
      await dropInvalidIndex(db, statement);
      await db.execute(sql.raw(statement));
    }
    await record(db, migration);
  }
  await flush();
}

function record(db: Db, migration: MigrationMeta): Promise<unknown> {
  return db.execute(sql`insert into "drizzle"."__drizzle_migrations" ("hash", "created_at")
      values (${migration.hash}, ${migration.folderMillis})`);
}

const CONCURRENT_INDEX = /create\s+(?:unique\s+)?index\s+concurrently\s+if\s+not\s+exists\s+"([^"]+)"/i;

/**
 * A concurrent build that failed or was interrupted leaves its index behind, invalid (never used by queries,
 * still maintained by writes): IF NOT EXISTS would then skip it for good. Such an index is dropped first.
 */
async function dropInvalidIndex(db: Db, statement: string): Promise<void> {
  const name = CONCURRENT_INDEX.exec(statement)?.[1];
  if (name === undefined) return;
  const invalid = rowsOf(
    await db.execute(sql`select 1 as one from pg_index i join pg_class c on c.oid = i.indexrelid
        where c.relname = ${name} and c.relnamespace = current_schema()::regnamespace and not i.indisvalid`),
  );
  if (invalid.length > 0) await db.execute(sql`drop index concurrently if exists ${sql.identifier(name)}`);
}

function rowsOf(result: unknown): Row[] {
  return (result as { rows: Row[] }).rows;
}

/** The newest migration of each folder (its `folderMillis`), read once. */
const newestKnown = new Map<string, number>();

/**
 * Whether the database has every migration this build knows: `current` when its newest recorded migration is at
 * least this build's newest (a newer build may already have migrated it: additive migrations keep the old code
 * working during a rollout), `pending` otherwise. One query, which is also the readiness probe's database check.
 */
export async function migrationState(db: Db, migrationsFolder = MIGRATIONS_DIR): Promise<'current' | 'pending'> {
  let newest = newestKnown.get(migrationsFolder);
  if (newest === undefined) {
    newest = Math.max(0, ...readMigrationFiles({ migrationsFolder }).map((m) => m.folderMillis));
    newestKnown.set(migrationsFolder, newest);
  }
  const [row] = rowsOf(
    await db.execute(sql`select max(created_at) as last from "drizzle"."__drizzle_migrations"`),
  );
  return row?.last !== null && row?.last !== undefined && Number(row.last) >= newest ? 'current' : 'pending';
}
