import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import {
  createPostgresHandle,
  type DatabaseHandle,
  MIGRATIONS_DIR,
  PGLITE_EXTENSIONS,
  pgliteHandle,
  runMigrations,
} from '#platform';

/** A copy of the migrations folder that stops after migration `tag` (an older release's database). */
function migrationsUpTo(tag: string): { folder: string; remove: () => void } {
  const folder = mkdtempSync(join(tmpdir(), 'gov-migrations-'));
  cpSync(MIGRATIONS_DIR, folder, { recursive: true });
  const journalFile = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === tag);
  if (last < 0) throw new Error(`No migration ${tag}`);
  journal.entries = journal.entries.slice(0, last + 1);
  writeFileSync(journalFile, JSON.stringify(journal));
  return { folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

async function tables(handle: DatabaseHandle): Promise<string[]> {
  const result = (await handle.db.execute(
    sql`select tablename from pg_tables where schemaname = 'public' order by tablename`,
  )) as unknown as { rows: { tablename: string }[] };
  return result.rows.map((r) => r.tablename);
}

async function appliedMigrations(handle: DatabaseHandle): Promise<number> {
  const result = (await handle.db.execute(
    sql`select count(*)::int as n from drizzle.__drizzle_migrations`,
  )) as unknown as { rows: { n: number }[] };
  return result.rows[0]!.n;
}

async function extensions(handle: DatabaseHandle): Promise<string[]> {
  const result = (await handle.db.execute(sql`select extname from pg_extension`)) as unknown as {
    rows: { extname: string }[];
  };
  return result.rows.map((r) => r.extname);
}

function withPath(url: URL, database: string): string {
  const copy = new URL(url);
  copy.pathname = `/${database}`;
  return copy.toString();
}

describe('migrations', () => {
  it('applies once when several replicas start on an empty database at the same time', async () => {
    // On PostgreSQL: four pools on a new database. On PGlite: four concurrent runs on one new instance.
    const replicas: DatabaseHandle[] = [];
    if (inject('databaseMode') === 'postgres') {
      const templateUrl = new URL(inject('pgTemplateUrl'));
      const name = `${inject('pgRunPrefix')}_mig_${randomBytes(3).toString('hex')}`;
      const admin = new pg.Client({ connectionString: withPath(templateUrl, 'postgres') });
      await admin.connect();
      await admin.query(`create database ${name}`);
      await admin.end();
      for (let i = 0; i < 4; i++) replicas.push(createPostgresHandle(withPath(templateUrl, name), 2));
    } else {
      const one = pgliteHandle(await PGlite.create({ extensions: PGLITE_EXTENSIONS }));
      for (let i = 0; i < 4; i++) replicas.push(one);
    }
    try {
      await Promise.all(replicas.map((h) => runMigrations(h)));
      expect(await tables(replicas[0]!)).toEqual(
        expect.arrayContaining([
          'audit_entries',
          'memberships',
          'organizations',
          'revoked_tokens',
          'sessions',
          'users',
        ]),
      );
      const applied = await appliedMigrations(replicas[0]!);
      expect(applied).toBeGreaterThanOrEqual(1);
      await runMigrations(replicas[1]!);
      expect(await appliedMigrations(replicas[0]!)).toBe(applied);
      expect(await extensions(replicas[0]!)).toContain('pg_trgm');
    } finally {
      await Promise.all([...new Set(replicas)].map((h) => h.close()));
    }
  });

  it('builds the same schema on PGlite, with pg_trgm, and is idempotent', async () => {
    const handle = pgliteHandle(await PGlite.create({ extensions: PGLITE_EXTENSIONS }));
    try {
      await runMigrations(handle);
      const count = await appliedMigrations(handle);
      await runMigrations(handle);
      expect(await appliedMigrations(handle)).toBe(count);
      expect(await tables(handle)).toEqual(
        expect.arrayContaining([
          'audit_entries',
          'memberships',
          'organizations',
          'revoked_tokens',
          'sessions',
          'users',
        ]),
      );
      expect(await extensions(handle)).toContain('pg_trgm');
      const similarity = (await handle.db.execute(
        sql`select similarity('governance', 'governed') > 0.3 as close`,
      )) as unknown as {
        rows: { close: boolean }[];
      };
      expect(similarity.rows[0]!.close).toBe(true);
    } finally {
      await handle.close();
    }
  });

  it('moves the mail of the old mail_outbox table into the general outbox, pending mail included', async () => {
    const handle = pgliteHandle(await PGlite.create({ extensions: PGLITE_EXTENSIONS }));
    const old = migrationsUpTo('0003_decision_pipeline');
    try {
      await runMigrations(handle, old.folder);
      const due = new Date('2026-11-01T10:00:00.000Z');
      await handle.db.execute(sql`insert into mail_outbox
          (id, "to", subject, template, body_encrypted, status, attempts, last_error, next_attempt_at, created_at)
        values ('aaaaaaaaaaaaaaaaaaaaaaaa', 'a@example.com', 'Reset your password', 'password-reset', 'v1.sealed',
                'pending', 2, '451 try later', ${due.toISOString()}, ${due.toISOString()}),
               ('bbbbbbbbbbbbbbbbbbbbbbbb', 'b@example.com', 'Welcome', 'welcome', null,
                'sent', 1, null, ${due.toISOString()}, ${due.toISOString()})`);
      await runMigrations(handle);
      expect(await tables(handle)).not.toContain('mail_outbox');
      const moved = (await handle.db.execute(
        sql`select id, topic, payload, sealed, status, attempts, last_error, next_attempt_at
            from outbox_messages order by id`,
      )) as unknown as { rows: Record<string, unknown>[] };
      expect(moved.rows).toHaveLength(2);
      expect(moved.rows[0]).toMatchObject({
        id: 'aaaaaaaaaaaaaaaaaaaaaaaa',
        topic: 'mail.send',
        payload: { to: 'a@example.com', subject: 'Reset your password', template: 'password-reset' },
        sealed: 'v1.sealed',
        status: 'pending',
        attempts: 2,
        last_error: '451 try later',
      });
      expect(new Date(moved.rows[0]!.next_attempt_at as string).toISOString()).toBe(due.toISOString());
      expect(moved.rows[1]).toMatchObject({ topic: 'mail.send', status: 'sent', sealed: null });
    } finally {
      old.remove();
      await handle.close();
    }
  });
});
