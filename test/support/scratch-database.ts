import pg from 'pg';
import { inject } from 'vitest';
import { freshDatabase } from './database.js';

/**
 * A migrated PostgreSQL database of the test's own, cloned from the run's template (the run's teardown drops it), for
 * a built process to run on: its name and URL. PostgreSQL only.
 */
export async function scratchDatabase(): Promise<{ name: string; url: string }> {
  const handle = await freshDatabase();
  try {
    const [[name]] = (await handle.textRows('select current_database()', [])) as [[string]];
    const url = new URL(inject('pgTemplateUrl'));
    url.pathname = `/${name}`;
    return { name, url: url.href };
  } finally {
    await handle.close();
  }
}

/** A connected client on the server's `postgres` database, for what is done to another database from outside. */
export async function adminClient(): Promise<pg.Client> {
  const url = new URL(inject('pgTemplateUrl'));
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.href });
  await client.connect();
  return client;
}
