import { PGlite } from '@electric-sql/pglite';
import { asc, sql, type SQL } from 'drizzle-orm';
import { boolean, integer, PgDialect, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll } from 'vitest';
import { type FilterNode, type ScimAttributeMap, ScimFilterError } from './ast.js';
import { matchesScimFilter } from './evaluate.js';
import { parseScimFilter } from './parser.js';
import { compileScimFilter } from './to-sql.js';

/**
 * Test helper, what the filter's specs share: a table of users with rows chosen for the edge cases (case folding
 * beyond ASCII, LIKE metacharacters, nulls and empty strings, equal instants), its SCIM attribute map, a getter for the
 * in-memory evaluator, and a PGlite database holding the rows.
 */

export const users = pgTable('scim_filter_users', {
  id: integer('id').primaryKey(),
  userName: text('user_name'),
  displayName: text('display_name'),
  active: boolean('active'),
  externalId: text('external_id'),
  email: text('email'),
  givenName: text('given_name'),
  familyName: text('family_name'),
  created: timestamp('created', { withTimezone: true, precision: 3 }),
  lastModified: timestamp('last_modified', { withTimezone: true, precision: 3 }),
});

export type Fixture = typeof users.$inferSelect;

const at = (iso: string) => new Date(iso);
export const FIXTURES: Fixture[] = [
  {
    id: 1,
    userName: 'alice',
    displayName: 'Alice Liddell',
    active: true,
    externalId: 'EXT-001',
    email: 'alice@example.com',
    givenName: 'Alice',
    familyName: 'Liddell',
    created: at('2024-01-01T00:00:00.000Z'),
    lastModified: at('2024-06-01T12:00:00.000Z'),
  },
  {
    id: 2,
    userName: 'bob',
    displayName: "Bob O'Brien",
    active: false,
    externalId: 'ext-002',
    email: 'bob@Example.org',
    givenName: 'Bob',
    familyName: "O'Brien",
    created: at('2024-02-15T08:30:00.000Z'),
    lastModified: null,
  },
  {
    id: 3,
    userName: 'Carol_Smith',
    displayName: 'Carol 100% Smith',
    active: true,
    externalId: null,
    email: 'carol@example.com',
    givenName: 'Carol',
    familyName: 'Smith',
    created: at('2023-12-31T23:59:59.500Z'),
    lastModified: at('2024-03-01T00:00:00.000Z'),
  },
  {
    id: 4,
    userName: 'dave\\admin',
    displayName: 'Dave',
    active: null,
    externalId: 'EXT-004',
    email: null,
    givenName: 'Dave',
    familyName: null,
    created: at('2024-05-05T05:05:05.000Z'),
    lastModified: at('2024-05-05T05:05:05.000Z'),
  },
  {
    id: 5,
    userName: 'ÉMILE',
    displayName: 'Émile Zola',
    active: true,
    externalId: '',
    email: 'emile@example.fr',
    givenName: 'Émile',
    familyName: 'Zola',
    created: at('2022-07-14T10:00:00.000Z'),
    lastModified: at('2024-07-14T10:00:00.000Z'),
  },
  {
    id: 6,
    userName: 'zoë',
    displayName: 'Zoë "Z" Sisyphus',
    active: false,
    externalId: 'EXT-006',
    email: 'zoe@example.com',
    givenName: 'Zoë',
    familyName: 'ΣΊΣΥΦΟΣ',
    created: at('2024-01-01T00:00:00.000Z'),
    lastModified: null,
  },
  {
    id: 7,
    userName: 'eve',
    displayName: '',
    active: true,
    externalId: 'EXT-007',
    email: 'EVE@EXAMPLE.COM',
    givenName: null,
    familyName: 'Eve',
    created: at('2025-01-01T00:00:00.000Z'),
    lastModified: at('2025-01-02T00:00:00.000Z'),
  },
  {
    id: 8,
    userName: 'frank',
    displayName: null,
    active: false,
    externalId: null,
    email: 'frank%x_y@example.com',
    givenName: 'Frank',
    familyName: 'Łukasz',
    created: null,
    lastModified: null,
  },
];
export const ALL_IDS = FIXTURES.map((f) => f.id);

/** The fixture table's SCIM attributes; `emails.type` is a constant expression (every address is a work one). */
export const ATTRIBUTES: ScimAttributeMap = {
  username: { column: users.userName, type: 'string', caseExact: false },
  displayname: { column: users.displayName, type: 'string', caseExact: false },
  active: { column: users.active, type: 'boolean', caseExact: false },
  externalid: { column: users.externalId, type: 'string', caseExact: true },
  emails: { column: users.email, type: 'string', caseExact: false },
  'emails.value': { column: users.email, type: 'string', caseExact: false },
  'emails.type': { column: sql`'work'::text`, type: 'string', caseExact: false },
  'name.givenname': { column: users.givenName, type: 'string', caseExact: false },
  'name.familyname': { column: users.familyName, type: 'string', caseExact: false },
  'meta.created': { column: users.created, type: 'dateTime', caseExact: false },
  'meta.lastmodified': { column: users.lastModified, type: 'dateTime', caseExact: false },
};

const FIELDS: Record<string, keyof Fixture> = {
  username: 'userName',
  displayname: 'displayName',
  active: 'active',
  externalid: 'externalId',
  emails: 'email',
  'emails.value': 'email',
  'name.givenname': 'givenName',
  'name.familyname': 'familyName',
  'meta.created': 'created',
  'meta.lastmodified': 'lastModified',
};

export const getter = (row: Fixture) => (path: string) =>
  path === 'emails.type' ? 'work' : Object.hasOwn(FIELDS, path) ? row[FIELDS[path]!] : undefined;

const dialect = new PgDialect();
export const toQuery = (fragment: SQL) => dialect.sqlToQuery(fragment);

export const memoryIds = (node: FilterNode) =>
  FIXTURES.filter((row) => matchesScimFilter(node, getter(row), ATTRIBUTES)).map((row) => row.id);

/** The refusal a call makes, or fails the test if it does not throw a ScimFilterError. */
export function refusal(call: () => unknown): ScimFilterError {
  try {
    call();
  } catch (err) {
    if (err instanceof ScimFilterError) return err;
    throw err;
  }
  throw new Error('expected a ScimFilterError');
}

export const compile = (filter: string) => compileScimFilter(parseScimFilter(filter), ATTRIBUTES);

/** A PGlite database with the fixture table and rows; `sqlIds` answers the ids a condition selects, in order. */
export async function fixtureDatabase() {
  const client = await PGlite.create();
  const db = drizzle(client);
  await db.execute(sql`create table scim_filter_users (
    id integer primary key, user_name text, display_name text, active boolean, external_id text, email text,
    given_name text, family_name text, created timestamptz(3), last_modified timestamptz(3))`);
  await db.insert(users).values(FIXTURES);
  return {
    sqlIds: async (where: SQL) =>
      (await db.select({ id: users.id }).from(users).where(where).orderBy(asc(users.id))).map((r) => r.id),
    close: () => client.close(),
  };
}

export type FixtureDatabase = Awaited<ReturnType<typeof fixtureDatabase>>;

/**
 * The fixture database of the calling `describe`, made before its tests and closed after them: the ids a condition
 * selects in it, in order (call it inside a test).
 */
export function useFixtureDatabase(): (where: SQL) => Promise<number[]> {
  let database: FixtureDatabase | undefined;
  // Starting PGlite can take a while on a busy machine.
  beforeAll(async () => {
    database = await fixtureDatabase();
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });
  return (where) => database!.sqlIds(where);
}
