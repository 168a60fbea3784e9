import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { inlineSql, sqlLiteral } from './inline-sql.js';

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
});
