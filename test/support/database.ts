import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { inject } from 'vitest';
import { createPostgresHandle, type DatabaseHandle, PGLITE_EXTENSIONS, pgliteHandle } from '#platform';

/** A fresh, migrated database for one test file, cloned from the run's template. */
export async function freshDatabase(): Promise<DatabaseHandle> {
  if (inject('databaseMode') === 'postgres') return createPostgresHandle(await freshPostgresUrl(), 30);
  const dump = readFileSync(inject('pgliteDump'));
  const client = await PGlite.create({ loadDataDir: new Blob([dump]), extensions: PGLITE_EXTENSIONS });
  return pgliteHandle(client);
}

/** The URL of a fresh, migrated PostgreSQL database cloned from the run's template (PostgreSQL runs only). */
export async function freshPostgresUrl(): Promise<string> {
  const templateUrl = new URL(inject('pgTemplateUrl'));
  const template = templateUrl.pathname.slice(1);
  const name = `${inject('pgRunPrefix')}_${randomBytes(4).toString('hex')}`;
  const adminUrl = new URL(templateUrl);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  try {
    // Two files cloning at the same instant can collide on the template; retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`create database ${name} template ${template}`);
        break;
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(templateUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Another replica's view of the database behind `handle`: on PostgreSQL a second pool on the same database (only
 * a NOTIFY reaches what is built on it), on PGlite the same handle (one process). `close` ends the second pool.
 */
export async function replicaHandle(
  handle: DatabaseHandle,
): Promise<{ handle: DatabaseHandle; close: () => Promise<void> }> {
  if (handle.driver !== 'postgres') return { handle, close: async () => undefined };
  const result = (await handle.db.execute(sql`select current_database() as name`)) as unknown as {
    rows: { name: string }[];
  };
  const url = new URL(inject('pgTemplateUrl'));
  url.pathname = `/${result.rows[0]!.name}`;
  const replica = createPostgresHandle(url.toString(), 2);
  return { handle: replica, close: () => replica.close() };
}

/**
 * Lets several application instances close one handle: the real close runs with the last of them (PGlite, where a
 * second instance shares the first one's handle).
 */
export function shareHandle(handle: DatabaseHandle): DatabaseHandle {
  const state = handle as DatabaseHandle & { shares?: number; realClose?: () => Promise<void> };
  if (state.shares === undefined) {
    state.shares = 1;
    state.realClose = handle.close.bind(handle);
    state.close = async () => {
      state.shares! -= 1;
      if (state.shares === 0) await state.realClose!();
    };
  }
  state.shares += 1;
  return handle;
}
