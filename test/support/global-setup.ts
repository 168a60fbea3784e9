import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createPostgresHandle, PGLITE_EXTENSIONS, pgliteHandle, runMigrations } from '#platform';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseMode: 'postgres' | 'pglite';
    pgTemplateUrl: string;
    pgRunPrefix: string;
    pgliteDump: string;
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * Migrates once per run, then every test file clones it: on PostgreSQL a template database
 * (CREATE DATABASE … TEMPLATE), on PGlite a dumped data directory.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const prefix = `gov_t_${randomBytes(4).toString('hex')}`;
    const template = `${prefix}_tpl`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create database ${template}`);
    const handle = createPostgresHandle(withDatabase(url, template), 2);
    await runMigrations(handle);
    await handle.close();
    project.provide('databaseMode', 'postgres');
    project.provide('pgTemplateUrl', withDatabase(url, template));
    project.provide('pgRunPrefix', prefix);
    return async () => {
      const { rows } = await admin.query<{ datname: string }>(
        `select datname from pg_database where datname like $1`,
        [`${prefix}%`],
      );
      for (const { datname } of rows) await admin.query(`drop database if exists ${datname} with (force)`);
      await admin.end();
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'gov-pglite-'));
  const client = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
  await runMigrations(pgliteHandle(client));
  const dump = await client.dumpDataDir('none');
  const file = join(dir, 'template.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  await client.close();
  project.provide('databaseMode', 'pglite');
  project.provide('pgliteDump', file);
  return async () => rmSync(dir, { recursive: true, force: true });
}
