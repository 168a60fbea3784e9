import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import { users } from './user.schema.js';

/**
 * Scalar subqueries on the users table for other modules' queries, which may show a user's address but do not own
 * the table: they embed these instead of joining it (null when the user is gone, as a left join would give).
 */
export function userEmailOf(userId: AnyColumn | SQL): SQL<string | null> {
  return sql<string | null>`(select ${users.email} from ${users} where ${users.id} = ${userId})`;
}
