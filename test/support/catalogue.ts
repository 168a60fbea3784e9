import { sql } from 'drizzle-orm';
import type { DatabaseHandle } from '#platform';
import { rowsOf } from './rows.js';

export interface CatalogueColumn {
  table: string;
  column: string;
  dataType: string;
}

/** The column types that can hold a planted text: strings of any length, JSON, arrays, and bytes. */
const SEARCHABLE_TYPES = ['text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea'];

/**
 * Every column of every table of the schema that could hold a planted text, read from the catalogue (not from the
 * Drizzle schema, so that a table or column a migration adds is searched without anyone listing it).
 */
export function searchableColumns(ctx: { db: DatabaseHandle }): Promise<CatalogueColumn[]> {
  return rowsOf<CatalogueColumn>(
    ctx,
    sql`select c.table_name as "table", c.column_name as "column", c.data_type as "dataType"
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema()
      and t.table_type = 'BASE TABLE'
      and c.data_type in (${sql.join(
        SEARCHABLE_TYPES.map((t) => sql`${t}`),
        sql`, `,
      )})
    order by 1, 2`,
  );
}

/**
 * The columns (`table.column`) in which any row holds any of the texts, compared exactly (no pattern characters): a
 * column's value as text (JSON and arrays as written by PostgreSQL, bytes with their printable characters as they
 * are).
 */
export async function columnsHolding(
  ctx: { db: DatabaseHandle },
  texts: readonly string[],
): Promise<string[]> {
  if (texts.length === 0) throw new Error('columnsHolding needs at least one text');
  const found: string[] = [];
  for (const { table, column, dataType } of await searchableColumns(ctx)) {
    const value =
      dataType === 'bytea'
        ? sql`encode(${sql.identifier(column)}, 'escape')`
        : sql`${sql.identifier(column)}::text`;
    const anyOf = sql.join(
      texts.map((text) => sql`strpos(${value}, ${text}) > 0`),
      sql` or `,
    );
    const rows = await rowsOf<{ n: unknown }>(
      ctx,
      sql`select count(*)::int as n from ${sql.identifier(table)} where ${anyOf}`,
    );
    if (Number(rows[0]?.n) > 0) found.push(`${table}.${column}`);
  }
  return found;
}
