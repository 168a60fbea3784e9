import { type SQL, sql } from 'drizzle-orm';
import type { Db, Row } from '#platform';

/** The audit log's table: exported in sequence order, so that the chain can be verified line by line. */
export const AUDIT_TABLE = 'audit_entries';
const ORGANIZATIONS_TABLE = 'organizations';

/** A table that holds organization data: it has an `organization_id` column. */
export interface OrganizationTable {
  name: string;
  /** Primary-key columns, in key order (the export pages by them). */
  primaryKey: string[];
  /** Whether it has a `user_id` column too (user-scoped rows of erased users). */
  hasUserId: boolean;
}

/** A table with `user_id` and no `organization_id`: a user's own rows (backup codes, revoked tokens). */
export interface UserTable {
  name: string;
}

export interface DataCatalogue {
  /** Every table with an `organization_id` column, children before the tables they reference. */
  organizationTables: OrganizationTable[];
  userTables: UserTable[];
}

export async function rowsOf(db: Db, query: SQL): Promise<Row[]> {
  return ((await db.execute(query)) as unknown as { rows: Row[] }).rows;
}

/**
 * Reads from the database's catalogue (information_schema and pg_constraint, on PostgreSQL and PGlite alike) which
 * tables hold organization data, so that erasure and export cannot forget a table added later: any table with an
 * `organization_id` column is included. A table that holds an organization's data must therefore carry that
 * column (every table does today).
 */
export async function readCatalogue(db: Db): Promise<DataCatalogue> {
  const columns = await rowsOf(
    db,
    sql`select c.table_name, c.column_name from information_schema.columns c
        join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
        where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
          and c.column_name in ('organization_id', 'user_id')
        order by c.table_name`,
  );
  const keys = await rowsOf(
    db,
    sql`select k.table_name, k.column_name from information_schema.table_constraints tc
        join information_schema.key_column_usage k
          on k.constraint_schema = tc.constraint_schema and k.constraint_name = tc.constraint_name
         and k.table_name = tc.table_name
        where tc.table_schema = current_schema() and tc.constraint_type = 'PRIMARY KEY'
        order by k.table_name, k.ordinal_position`,
  );
  const references = await rowsOf(
    db,
    sql`select child.relname as child, parent.relname as parent from pg_constraint con
        join pg_class child on child.oid = con.conrelid
        join pg_class parent on parent.oid = con.confrelid
        join pg_namespace n on n.oid = child.relnamespace
        where con.contype = 'f' and n.nspname = current_schema() and child.oid <> parent.oid`,
  );
  const byTable = new Map<string, Set<string>>();
  for (const row of columns) {
    const table = String(row.table_name);
    if (!byTable.has(table)) byTable.set(table, new Set());
    byTable.get(table)!.add(String(row.column_name));
  }
  const primaryKeys = new Map<string, string[]>();
  for (const row of keys) {
    const table = String(row.table_name);
    if (!primaryKeys.has(table)) primaryKeys.set(table, []);
    primaryKeys.get(table)!.push(String(row.column_name));
  }
  const names = [...byTable.entries()]
    .filter(([name, cols]) => cols.has('organization_id') && name !== ORGANIZATIONS_TABLE)
    .map(([name]) => name);
  const organizationTables = childrenFirst(
    names,
    references.map((r) => [String(r.child), String(r.parent)] as const),
  ).map((name) => ({
    name,
    primaryKey: primaryKeys.get(name) ?? [],
    hasUserId: byTable.get(name)!.has('user_id'),
  }));
  const userTables = [...byTable.entries()]
    .filter(([, cols]) => cols.has('user_id') && !cols.has('organization_id'))
    .map(([name]) => ({ name }));
  return { organizationTables, userTables };
}

/** Orders the tables so that a table comes before every table it references (by name otherwise). */
export function childrenFirst(names: string[], edges: ReadonlyArray<readonly [string, string]>): string[] {
  const set = new Set(names);
  const sorted = [...names].sort();
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: string[] = [];
  // Post-order over "is referenced by": a table is emitted after everything that references it.
  const visit = (name: string): void => {
    if (done.has(name) || visiting.has(name)) return;
    visiting.add(name);
    for (const [child, parent] of edges) if (parent === name && set.has(child)) visit(child);
    visiting.delete(name);
    done.add(name);
    out.push(name);
  };
  for (const name of sorted) visit(name);
  return out;
}

export function ident(name: string): SQL {
  return sql`${sql.identifier(name)}`;
}
