import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import type { Plan } from '#platform';
import { organizations } from './organization.schema.js';

/**
 * Scalar subqueries on the organizations table for other modules' queries (an invitation shows its organization's
 * name, a key's principal carries its plan): they embed these instead of joining the table, which the
 * organizations module owns. Null when the organization does not exist.
 */
export function organizationNameOf(organizationId: AnyColumn | SQL): SQL<string | null> {
  return sql<
    string | null
  >`(select ${organizations.name} from ${organizations} where ${organizations.id} = ${organizationId})`;
}

export function organizationPlanOf(organizationId: AnyColumn | SQL): SQL<Plan | null> {
  return sql<Plan | null>`(select ${organizations.plan} from ${organizations} where ${organizations.id} = ${organizationId})`;
}
