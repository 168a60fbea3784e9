import { Column, getTableName, Name, Param, Placeholder, SQL, StringChunk, Table } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';

const dialect = new PgDialect();

/** A quote, a backslash or a NUL: what a string literal must escape (or refuse). */
// eslint-disable-next-line no-control-regex -- NUL is exactly what must be found
const NEEDS_ESCAPE = /['\\\u0000]/;

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
  // Most values hold nothing to escape: one scan answers that.
  if (!NEEDS_ESCAPE.test(text)) return `E'${text}'`;
  if (text.includes('\u0000')) throw new Error('NUL character in an inlined SQL statement');
  return `E'${text.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

const PLACEHOLDER = /\$(\d+)/g;

// Drizzle's table markers (registered symbols; its typings keep them internal).
const IS_ALIAS = Symbol.for('drizzle:IsAlias');
const SCHEMA = Symbol.for('drizzle:Schema');

const quoteName = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Statement text written by the code itself, which must hold no `$` (dollar quoting or a `$` in an identifier). */
function ownText(text: string): string {
  if (text.includes('$')) throw new Error('A statement to inline holds a "$" that is not a placeholder');
  return text;
}

/**
 * The statement's text with its values inlined, written straight from its chunks: text, nested SQL, parameters
 * (through their encoder, as the dialect would), plain values, names, and the columns and tables of the
 * unaliased, unqualified, explicitly named kind the schemas declare. Answers false on anything else (arrays,
 * subqueries, views, aliases, placeholders), which the dialect then renders. The hot statements (the trace
 * writer's group commit) are made of these chunks only, and the dialect's own walk cost more than the database's
 * work on them.
 */
function writeChunks(chunks: readonly unknown[], out: string[]): boolean {
  for (const chunk of chunks) {
    if (chunk === undefined) continue;
    if (chunk instanceof StringChunk) {
      out.push(ownText(chunk.value.join('')));
    } else if (chunk instanceof SQL) {
      if (!writeChunks(chunk.queryChunks, out)) return false;
    } else if (chunk instanceof Param) {
      if (chunk.value instanceof Placeholder) return false;
      const mapped: unknown = chunk.value === null ? null : chunk.encoder.mapToDriverValue(chunk.value);
      if (mapped instanceof SQL) {
        if (!writeChunks(mapped.queryChunks, out)) return false;
      } else {
        out.push(sqlLiteral(mapped));
      }
    } else if (chunk instanceof Column) {
      const table = chunk.table as unknown as Record<symbol, unknown>;
      if (chunk.keyAsName || table[IS_ALIAS] || table[SCHEMA] !== undefined) return false;
      out.push(`${quoteName(getTableName(chunk.table))}.${quoteName(chunk.name)}`);
    } else if (chunk instanceof Table) {
      const table = chunk as unknown as Record<symbol, unknown>;
      if (table[IS_ALIAS] || table[SCHEMA] !== undefined) return false;
      out.push(quoteName(getTableName(chunk)));
    } else if (chunk instanceof Name) {
      out.push(quoteName(chunk.value));
    } else if (typeof chunk !== 'object' || chunk === null || chunk instanceof Date) {
      out.push(sqlLiteral(chunk));
    } else {
      return false;
    }
  }
  return true;
}

/**
 * The statement as text with its parameters inlined as literals, for the simple query protocol (which takes
 * several statements in one message but no parameters). The statement's own text must hold no `$` but its
 * placeholders (refused otherwise: dollar quoting or a `$` in an identifier would be misread); values may hold
 * anything. Written from the statement's chunks where it can (`writeChunks`), otherwise rendered by the dialect
 * and its placeholders replaced by position in one pass.
 */
export function inlineSql(statement: SQL): string {
  const out: string[] = [];
  if (writeChunks(statement.queryChunks, out)) return out.join('');
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
