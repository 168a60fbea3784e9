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

/** How many migrations the repository has: its journal's entries. */
function migrationCount(): number {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  return journal.entries.length;
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

/** PostgreSQL: the URL of a new, empty database of this run. */
async function newPostgresDatabase(): Promise<string> {
  const templateUrl = new URL(inject('pgTemplateUrl'));
  const name = `${inject('pgRunPrefix')}_mig_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: withPath(templateUrl, 'postgres') });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  return withPath(templateUrl, name);
}

/** An empty database on the run's driver. */
async function newDatabase(): Promise<DatabaseHandle> {
  return inject('databaseMode') === 'postgres'
    ? createPostgresHandle(await newPostgresDatabase(), 2)
    : pgliteHandle(await PGlite.create({ extensions: PGLITE_EXTENSIONS }));
}

const ORGANIZATION_INDEXES = [
  'login_events_org_idx',
  'one_time_tokens_org_idx',
  'outbox_messages_org_idx',
  'sessions_org_idx',
];

async function indexStates(
  handle: DatabaseHandle,
): Promise<{ name: string; valid: boolean; unique: boolean }[]> {
  const result = (await handle.db.execute(
    sql`select c.relname as name, i.indisvalid as valid, i.indisunique as unique from pg_index i
        join pg_class c on c.oid = i.indexrelid
        where c.relname = any(${sql.param(ORGANIZATION_INDEXES)}::text[]) order by c.relname`,
  )) as unknown as { rows: { name: string; valid: boolean; unique: boolean }[] };
  return result.rows;
}

const insertSession = (id: string) =>
  `insert into sessions (id, jti, user_id, organization_id, created_at, expires_at)
   values ('${id}', 'jti-${id}', 'u1', 'org1', now(), now() + interval '1 hour')`;

describe('migrations', () => {
  it('applies once when several replicas start on an empty database at the same time', async () => {
    // On PostgreSQL: four pools on a new database. On PGlite: four concurrent runs on one new instance.
    const replicas: DatabaseHandle[] = [];
    if (inject('databaseMode') === 'postgres') {
      const url = await newPostgresDatabase();
      for (let i = 0; i < 4; i++) replicas.push(createPostgresHandle(url, 2));
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
      // The organization indexes, built concurrently outside the transaction while the others waited.
      expect(await indexStates(replicas[0]!)).toEqual(
        ORGANIZATION_INDEXES.map((name) => ({ name, valid: true, unique: false })),
      );
    } finally {
      await Promise.all([...new Set(replicas)].map((h) => h.close()));
    }
  });

  it('rebuilds an organization index that an interrupted concurrent build left invalid, instead of skipping it', async () => {
    const handle = await newDatabase();
    const old = migrationsUpTo('0021_sso_domain_claims');
    try {
      await runMigrations(handle, old.folder);
      // A concurrent build that fails (here on duplicates) leaves its index behind, invalid.
      await handle.db.execute(sql.raw(insertSession('s1')));
      await handle.db.execute(sql.raw(insertSession('s2')));
      await expect(
        handle.db.execute(
          sql.raw('create unique index concurrently "sessions_org_idx" on sessions (organization_id)'),
        ),
      ).rejects.toThrow();
      expect(await indexStates(handle)).toEqual([{ name: 'sessions_org_idx', valid: false, unique: true }]);
      await runMigrations(handle);
      expect(await indexStates(handle)).toEqual(
        ORGANIZATION_INDEXES.map((name) => ({ name, valid: true, unique: false })),
      );
      // Every later migration recorded, the interrupted one's included.
      expect(await appliedMigrations(handle)).toBe(migrationCount());
    } finally {
      old.remove();
      await handle.close();
    }
  });

  // PostgreSQL's concurrent build and its locks: run by the PostgreSQL pass of the suite (PGlite has one session).
  const onPostgres = inject('databaseMode') === 'postgres' ? it : undefined;
  onPostgres?.(
    'builds the organization indexes without blocking writes: a session is stored while a build waits',
    async () => {
      const url = await newPostgresDatabase();
      const handle = createPostgresHandle(url, 2);
      const old = migrationsUpTo('0021_sso_domain_claims');
      const holder = new pg.Client({ connectionString: url });
      const writer = new pg.Client({ connectionString: url });
      try {
        await runMigrations(handle, old.folder);
        await holder.connect();
        await writer.connect();
        // An open transaction that wrote to sessions: the build of sessions_org_idx waits for it to end.
        await holder.query('begin');
        await holder.query(insertSession('s1'));
        let finished = false;
        const migrating = runMigrations(handle).finally(() => (finished = true));
        for (let waited = 0; ; waited += 50) {
          const { rows } = await writer.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
             where pid <> pg_backend_pid() and query like '%"sessions_org_idx"%' and wait_event_type = 'Lock'`,
          );
          if (rows[0]!.n > 0) break;
          expect(waited, 'the build never waited for the open transaction').toBeLessThan(20_000);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        // A plain CREATE INDEX would queue a share lock that this insert waits behind: it would time out.
        await writer.query('set statement_timeout = 5000');
        await writer.query(insertSession('s2'));
        expect(finished).toBe(false);
        await holder.query('commit');
        await migrating;
        expect(await indexStates(handle)).toEqual(
          ORGANIZATION_INDEXES.map((name) => ({ name, valid: true, unique: false })),
        );
      } finally {
        await holder.end().catch(() => undefined);
        await writer.end().catch(() => undefined);
        old.remove();
        await handle.close();
      }
    },
  );

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
