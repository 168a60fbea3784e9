import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';

const dialect = new PgDialect();

/**
 * A value as a PostgreSQL literal. Strings use the escape-string form (E'…', quotes and backslashes doubled),
 * which reads the same whatever `standard_conforming_strings` says; NUL cannot be stored in text and is refused.
 * Arrays become ARRAY[…] (the statement must cast them, as it casts an array parameter); plain objects become JSON
 * text; other objects (buffers, maps) are refused rather than guessed at.
 */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  // Numbers are parenthesised: after a minus sign in the statement, `-1` would otherwise open a `--` comment.
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('Non-finite number in an inlined SQL statement');
    return `(${String(value)})`;
  }
  if (typeof value === 'bigint') return `(${value.toString()})`;
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return sqlLiteral(value.toISOString());
  if (Array.isArray(value)) return value.length === 0 ? `'{}'` : `ARRAY[${value.map(sqlLiteral).join(',')}]`;
  if (typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value) as unknown;
    if (prototype !== Object.prototype && prototype !== null) {
      throw new Error('Only plain objects can be inlined in a SQL statement');
    }
    return sqlLiteral(JSON.stringify(value));
  }
  const text = String(value);
  if (text.includes('\u0000')) throw new Error('NUL character in an inlined SQL statement');
  return `E'${text.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

const PLACEHOLDER = /\$(\d+)/g;

/**
 * The statement as text with its parameters inlined as literals, for the simple query protocol (which takes
 * several statements in one message but no parameters). Placeholders are replaced by position in one pass over
 * the statement's own text, which must hold no `$` but its placeholders (refused otherwise: dollar quoting or a
 * `$` in an identifier would be misread); values may hold anything.
 */
export function inlineSql(statement: SQL): string {
  const { sql: text, params } = dialect.sqlToQuery(statement);
  if (text.replace(PLACEHOLDER, '').includes('$')) {
    throw new Error('A statement to inline holds a "$" that is not a placeholder');
  }
  return text.replace(PLACEHOLDER, (_, index: string) => {
    const position = Number(index) - 1;
    if (position < 0 || position >= params.length) throw new Error(`Unbound placeholder $${index}`);
    return sqlLiteral(params[position]);
  });
}
