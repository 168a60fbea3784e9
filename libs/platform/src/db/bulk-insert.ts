import { getTableColumns, getTableName, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';

interface InsertShape {
  columns: [key: string, column: PgColumn][];
  /** `insert into "t" ("a", "b") select u.c0::varchar(24), u.c1::jsonb from unnest(` */
  head: SQL;
  /** `) as u(c0, c1)` */
  tail: SQL;
}

const shapes = new WeakMap<PgTable, InsertShape>();

function shapeOf(table: PgTable): InsertShape {
  let shape = shapes.get(table);
  if (shape) return shape;
  const columns = Object.entries(getTableColumns(table)) as [string, PgColumn][];
  const names = columns.map(([, c]) => `"${c.name}"`).join(', ');
  const casts = columns.map(([, c], i) => `u.c${i}::${castType(c)}`).join(', ');
  const aliases = columns.map((_, i) => `c${i}`).join(', ');
  shape = {
    columns,
    head: sql.raw(`insert into "${getTableName(table)}" (${names}) select ${casts} from unnest(`),
    tail: sql.raw(`) as u(${aliases})`),
  };
  shapes.set(table, shape);
  return shape;
}

/**
 * The type each text element is cast to. Length-limited character types are left to the insert's own assignment
 * cast, which refuses an over-long value: an explicit cast to varchar(n) would silently cut it.
 */
function castType(column: PgColumn): string {
  const type = column.getSQLType();
  return /^(varchar|char|character)\b/.test(type) ? 'text' : type;
}

function toText(column: PgColumn, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (column.dataType === 'json') return JSON.stringify(value);
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

/**
 * One INSERT of many complete rows, as one text array per column unnested and cast to the column's type: the
 * statement has as many parameters as the table has columns whatever the number of rows, and building it costs
 * next to nothing (the query builder's per-value work dominated group-commit batches). Every column of the table
 * is written, so rows must be complete (`$inferSelect`); there is no ON CONFLICT and no RETURNING.
 */
export function bulkInsert<T extends PgTable>(table: T, rows: readonly T['$inferSelect'][]): SQL {
  const { columns, head, tail } = shapeOf(table);
  const arrays = columns.map(
    ([key, column]) =>
      sql`${sql.param(rows.map((row) => toText(column, (row as Record<string, unknown>)[key])))}::text[]`,
  );
  return sql.join([head, sql.join(arrays, sql`, `), tail]);
}
