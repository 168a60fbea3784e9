import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { inject } from 'vitest';
import {
  createPostgresHandle,
  type DatabaseHandle,
  PGLITE_EXTENSIONS,
  pgliteHandle,
} from '../../libs/platform/src/index.js';

/** A fresh, migrated database for one test file, cloned from the run's template. */
export async function freshDatabase(): Promise<DatabaseHandle> {
  if (inject('databaseMode') === 'postgres') {
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
    return createPostgresHandle(url.toString(), 30);
  }
  const dump = readFileSync(inject('pgliteDump'));
  const client = await PGlite.create({ loadDataDir: new Blob([dump]), extensions: PGLITE_EXTENSIONS });
  return pgliteHandle(client);
}
