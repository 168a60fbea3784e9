import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  char,
  doublePrecision,
  jsonb,
  pgTable,
  timestamp,
  varchar,
} from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkInsert, type DatabaseHandle, inlineSql, type Row, TransactionHost } from '#platform';
import { freshDatabase } from './support/database.js';

// Strings that would break a naively quoted literal, or a second pass over placeholders.
const HOSTILE = [
  "it's",
  'back\\slash',
  "\\'; drop table pipeline_probe; --",
  '$1 and $2 and $$dollar$$',
  "E'x'",
  'line\nbreak\ttab',
  'NULL',
  '{"a": "b\\"c"}',
  'ünïcödé ☃ 🚀',
  '',
];

const bulkProbe = pgTable('bulk_probe', {
  id: char('id', { length: 2 }).primaryKey(),
  code: varchar('code', { length: 8 }),
  doc: jsonb('doc').notNull(),
  at: timestamp('at', { withTimezone: true, precision: 3 }).notNull(),
  score: doublePrecision('score').notNull(),
  flag: boolean('flag').notNull(),
  count: bigint('count', { mode: 'number' }).notNull(),
});

/** An error's message with its causes' (the query builder wraps driver errors). */
function messages(err: unknown): string {
  const parts: string[] = [];
  for (let e = err; e instanceof Error; e = e.cause) parts.push(e.message);
  return parts.join(' | ');
}

describe('pipelined transactions', () => {
  let db: DatabaseHandle;
  let tx: TransactionHost;

  beforeAll(async () => {
    db = await freshDatabase();
    tx = new TransactionHost(db);
    await db.db.execute(sql`create table pipeline_probe (id int primary key, t text, j jsonb, a text[])`);
    await db.db
      .execute(sql`create table bulk_probe (id char(2) primary key, code varchar(8), doc jsonb not null,
      at timestamp(3) with time zone not null, score double precision not null, flag boolean not null,
      count bigint not null)`);
  });
  afterAll(async () => db?.close());

  const rows = async () =>
    (
      (await db.db.execute(sql`select id, t, j, a from pipeline_probe order by id`)) as unknown as {
        rows: { id: number; t: string; j: unknown; a: string[] }[];
      }
    ).rows;
  const clear = () => db.db.execute(sql`delete from pipeline_probe`);

  it('stores every hostile string exactly as given, and answers each statement’s rows in order', async () => {
    await clear();
    const results = await tx.pipelined(async (send) => {
      const inserts = HOSTILE.map(
        (text, i) =>
          sql`insert into pipeline_probe (id, t, j, a)
              values (${i}, ${text}, ${JSON.stringify({ text })}::jsonb, ${sql.param([text, text])}::text[])`,
      );
      return send(
        [...inserts, sql`select count(*)::int as n from pipeline_probe`, sql`select ${'two'} as v`],
        {
          commit: true,
        },
      );
    });
    expect(results).toHaveLength(HOSTILE.length + 2);
    expect(results[HOSTILE.length]).toEqual([{ n: HOSTILE.length }]);
    expect(results[HOSTILE.length + 1]).toEqual([{ v: 'two' }]);
    const stored = await rows();
    expect(stored.map((r) => r.t)).toEqual(HOSTILE);
    expect(stored.map((r) => r.j)).toEqual(HOSTILE.map((text) => ({ text })));
    expect(stored.map((r) => r.a)).toEqual(HOSTILE.map((text) => [text, text]));
  });

  it('reads inlined literals back unchanged on this driver too', async () => {
    for (const text of HOSTILE) {
      const statement = sql`select ${text} as t, ${sql.param([text, null])}::text[] as a, 5-${-1} as n`;
      const result = (await db.db.execute(sql.raw(inlineSql(statement)))) as unknown as { rows: Row[] };
      expect(result.rows).toEqual([{ t: text, a: [text, null], n: 6 }]);
    }
  });

  it('keeps COMMIT out of reach of a statement ending in a comment or a negative number', async () => {
    await clear();
    const results = await tx.pipelined((send) =>
      send(
        [
          sql`insert into pipeline_probe (id, t) values (9, ${'committed'}) -- a trailing comment`,
          sql`select 5-${-1} as v`,
        ],
        { commit: true },
      ),
    );
    expect(results).toEqual([[], [{ v: 6 }]]);
    expect((await rows()).map((r) => r.t)).toEqual(['committed']);
  });

  it('refuses to send after the send that committed', async () => {
    await clear();
    await expect(
      tx.pipelined(async (send) => {
        await send([sql`insert into pipeline_probe (id, t) values (10, ${'first'})`], { commit: true });
        await send([sql`insert into pipeline_probe (id, t) values (11, ${'late'})`]);
      }),
    ).rejects.toThrow(/already committed/);
    // PostgreSQL committed 'first' with its send; PGlite commits when the function returns, so it rolled back.
    expect((await rows()).map((r) => r.t)).toEqual(db.driver === 'postgres' ? ['first'] : []);
  });

  it('bulk-inserts complete rows of every column type, and refuses an over-long value rather than cutting it', async () => {
    const at = new Date('2026-11-23T10:00:00.123Z');
    const rowsIn = [
      {
        id: 'ab',
        code: 'x'.repeat(8),
        doc: { q: "it's", n: [1, null] },
        at,
        score: 0.25,
        flag: true,
        count: 7,
      },
      { id: 'cd', code: null, doc: [], at, score: -1, flag: false, count: 9_007_199_254_740_991 },
    ];
    await tx.pipelined((send) => send([bulkInsert(bulkProbe, rowsIn)], { commit: true }));
    const stored = await db.db.select().from(bulkProbe).orderBy(bulkProbe.id);
    expect(stored).toEqual(rowsIn);
    await expect(
      tx.pipelined((send) =>
        send([bulkInsert(bulkProbe, [{ ...rowsIn[0]!, id: 'ef', code: 'x'.repeat(9) }])], { commit: true }),
      ),
    ).rejects.toThrow();
    expect(await db.db.select().from(bulkProbe)).toHaveLength(2);
  });

  it('rolls back what earlier round trips wrote when a later statement fails, and the connection stays usable', async () => {
    await clear();
    await expect(
      tx.pipelined(async (send) => {
        await send([sql`insert into pipeline_probe (id, t) values (1, ${'first'})`]);
        await send([sql`insert into pipeline_probe (id, t) values (2, ${'second'})`, sql`select 1 / 0`], {
          commit: true,
        });
      }),
    ).rejects.toSatisfy((err) => /division by zero/.test(messages(err)));
    expect(await rows()).toEqual([]);
    // The pool hands out a clean connection again.
    await tx.pipelined((send) => send([sql`insert into pipeline_probe (id, t) values (3, ${'third'})`]));
    expect((await rows()).map((r) => r.t)).toEqual(['third']);
  });

  it('rolls back when the function throws after sending, and commits on return without an explicit commit', async () => {
    await clear();
    await expect(
      tx.pipelined(async (send) => {
        await send([sql`insert into pipeline_probe (id, t) values (4, ${'kept?'})`]);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await rows()).toEqual([]);
    await tx.pipelined(async (send) => {
      await send([sql`insert into pipeline_probe (id, t) values (5, ${'kept'})`]);
    });
    expect((await rows()).map((r) => r.t)).toEqual(['kept']);
  });

  it('refuses a NUL character (PostgreSQL text cannot hold one) and stores nothing', async () => {
    await clear();
    await expect(
      tx.pipelined((send) => send([sql`insert into pipeline_probe (id, t) values (6, ${'a\u0000b'})`])),
    ).rejects.toThrow();
    expect(await rows()).toEqual([]);
  });
});
