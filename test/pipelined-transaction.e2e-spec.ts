import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, TransactionHost } from '../libs/platform/src/index.js';
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
