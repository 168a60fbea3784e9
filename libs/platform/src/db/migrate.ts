import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { DatabaseHandle } from './database.js';

/** The generated migrations: `drizzle/` at the repository root, copied beside the build output as `dist/drizzle`. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../../drizzle', import.meta.url));

// An arbitrary constant shared by every replica: the advisory lock that serialises migrations.
const MIGRATION_LOCK_KEY = 7_240_411;

// Runs already queued per handle. PGlite has one session, where advisory locks are re-entrant, so callers in
// the same process are serialised here as well.
const queued = new WeakMap<DatabaseHandle, Promise<void>>();

/**
 * Applies pending migrations under a session-level advisory lock, so replicas starting together never race:
 * the first one migrates, the others wait and then find nothing to do.
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
  await handle.withSession(async (db) => {
    await db.execute(sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      if (handle.driver === 'postgres') {
        await migratePg(db as never, { migrationsFolder });
      } else {
        await migratePglite(db as never, { migrationsFolder });
      }
    } finally {
      await db.execute(sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
    }
  });
}
