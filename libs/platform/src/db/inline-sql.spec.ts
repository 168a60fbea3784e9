import { and, eq, inArray, type SQL, sql } from 'drizzle-orm';
import { alias, integer, jsonb, PgDialect, pgSchema, pgTable, timestamp, varchar } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { inlineSql, sqlLiteral } from './inline-sql.js';

const items = pgTable('items', {
  id: varchar('id', { length: 24 }).primaryKey(),
  count: integer('count').notNull(),
  data: jsonb('data'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
});
const archived = pgSchema('archive').table('items', { id: varchar('id', { length: 24 }) });

/** What the dialect renders, its placeholders replaced by literals: the text the fast path must equal. */
function rendered(statement: SQL): string {
  const { sql: text, params } = new PgDialect().sqlToQuery(statement);
  return text.replace(/\$(\d+)/g, (_, index: string) => sqlLiteral(params[Number(index) - 1]));
}

describe('sqlLiteral', () => {
  it('renders scalars, NULL and dates', () => {
    expect(sqlLiteral(null)).toBe('NULL');
    expect(sqlLiteral(undefined)).toBe('NULL');
    expect(sqlLiteral(42)).toBe('(42)');
    expect(sqlLiteral(-0.25)).toBe('(-0.25)');
    expect(sqlLiteral(1e21)).toBe('(1e+21)');
    expect(sqlLiteral(12n)).toBe('(12)');
    expect(sqlLiteral(true)).toBe('TRUE');
    expect(sqlLiteral(false)).toBe('FALSE');
    expect(sqlLiteral(new Date('2026-11-23T10:00:00.123Z'))).toBe("E'2026-11-23T10:00:00.123Z'");
  });

  it('doubles quotes and backslashes inside an escape string, whatever the input', () => {
    expect(sqlLiteral("it's")).toBe("E'it''s'");
    expect(sqlLiteral('C:\\path')).toBe("E'C:\\\\path'");
    expect(sqlLiteral("\\'; drop table traces; --")).toBe("E'\\\\''; drop table traces; --'");
    expect(sqlLiteral('$1 $$ {}')).toBe("E'$1 $$ {}'");
  });

  it('renders arrays element by element, an empty one as an empty array literal, objects as JSON text', () => {
    expect(sqlLiteral(['a', null, "b'c"])).toBe("ARRAY[E'a',NULL,E'b''c']");
    expect(sqlLiteral([])).toBe("'{}'");
    expect(sqlLiteral({ q: "it's" })).toBe(`E'{"q":"it''s"}'`);
  });

  it('refuses NUL characters, non-finite numbers and objects that are not plain', () => {
    expect(() => sqlLiteral('a\u0000b')).toThrow(/NUL/);
    expect(() => sqlLiteral(Buffer.from('x'))).toThrow(/plain objects/);
    expect(() => sqlLiteral(new Map())).toThrow(/plain objects/);
    expect(() => sqlLiteral(Number.NaN)).toThrow(/Non-finite/);
    expect(() => sqlLiteral(Number.POSITIVE_INFINITY)).toThrow(/Non-finite/);
  });
});

describe('inlineSql', () => {
  it('replaces each placeholder by the literal of its parameter, by position', () => {
    const statement = sql`select ${'a'} as x, ${2} as y, ${sql.param(['p', 'q'])}::text[] as z where ${"it's"} <> ${'$1'}`;
    expect(inlineSql(statement)).toBe(
      "select E'a' as x, (2) as y, ARRAY[E'p',E'q']::text[] as z where E'it''s' <> E'$1'",
    );
  });

  it('keeps a negative number after a minus sign from opening a comment', () => {
    expect(inlineSql(sql`select 5-${-1} as v`)).toBe('select 5-(-1) as v');
  });

  it('refuses a statement whose own text holds a "$" that is not a placeholder', () => {
    expect(() => inlineSql(sql`select $$text$$ || ${'x'}`)).toThrow(/not a placeholder/);
  });

  it('leaves a statement without parameters as it is', () => {
    expect(inlineSql(sql`select 1`)).toBe('select 1');
  });

  it('writes columns, tables, names, encoded parameters and nested statements as the dialect renders them', () => {
    const at = new Date('2026-11-25T10:00:00.000Z');
    const statements = [
      sql`select ${items.id}, ${items.count} from ${items} where ${and(eq(items.id, "o'k"), eq(items.createdAt, at))}`,
      sql`update ${items} set ${sql.identifier('data')} = ${sql.param({ a: [1, "x'"] }, items.data)} where ${items.count} > ${3}`,
      sql`insert into ${items} (id) values (${'a'}) ${sql.raw('on conflict do nothing')}`,
      sql`select ${at} as at, ${null} as nothing, ${true} as yes`,
      // Not written directly (arrays, aliases, schemas, subqueries): the dialect's rendering is used.
      sql`select 1 from ${items} where ${inArray(items.id, ['a', 'b'])}`,
      sql`select ${alias(items, 'i').id} from ${alias(items, 'i')}`,
      sql`select ${archived.id} from ${archived}`,
      sql`select * from (${sql`select ${items.id} from ${items}`}) s`,
    ];
    for (const statement of statements) expect(inlineSql(statement)).toBe(rendered(statement));
    expect(inlineSql(statements[0]!)).toBe(
      `select "items"."id", "items"."count" from "items" where ("items"."id" = E'o''k' and "items"."created_at" = E'2026-11-25T10:00:00.000Z')`,
    );
  });

  it('refuses a "$" in the statement\'s own text on the direct path too', () => {
    expect(() => inlineSql(sql`select ${items.id} from ${items} where x = ${sql.raw('$1')}`)).toThrow(
      /not a placeholder/,
    );
  });
});
