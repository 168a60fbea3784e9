import { type AnyColumn, type SQL, sql } from 'drizzle-orm';
import type { Db, Plan } from '#platform';
import { memberships, organizations } from './organization.schema.js';

/**
 * Scalar subqueries on the organizations table for other modules' queries (an invitation shows its organization's
 * name, a key's principal carries its plan): they embed these instead of joining the table, which the
 * organizations module owns. Null when the organization does not exist or is deleted (`deleted_at` set, awaiting
 * erasure): whatever reads through them (keys, invitations) then names no one.
 */
export function organizationNameOf(organizationId: AnyColumn | SQL): SQL<string | null> {
  return sql<
    string | null
  >`(select ${organizations.name} from ${organizations} where ${organizations.id} = ${organizationId} and ${organizations.deletedAt} is null)`;
}

export function organizationPlanOf(organizationId: AnyColumn | SQL): SQL<Plan | null> {
  return sql<Plan | null>`(select ${organizations.plan} from ${organizations} where ${organizations.id} = ${organizationId} and ${organizations.deletedAt} is null)`;
}

/** True while the user holds an active membership of the organization (a workspace key's creator, say). */
export function creatorIsActiveMember(
  organizationId: AnyColumn | SQL,
  userId: AnyColumn | SQL,
): SQL<boolean> {
  return sql<boolean>`exists (select 1 from ${memberships} where ${memberships.organizationId} = ${organizationId} and ${memberships.userId} = ${userId} and ${memberships.isActive})`;
}

/**
 * True while the organization exists and is not deleted: for other modules' scheduled work (alert evaluation,
 * scheduled digests) to leave a deleted organization alone during its grace period.
 */
export function organizationIsLive(organizationId: AnyColumn | SQL): SQL<boolean> {
  return sql<boolean>`exists (select 1 from ${organizations} where ${organizations.id} = ${organizationId} and ${organizations.deletedAt} is null)`;
}

/** Whether the organization exists and is not deleted, read now (in the caller's transaction when `db` is its). */
export async function isOrganizationLive(db: Db, organizationId: string): Promise<boolean> {
  const result = await db.execute(sql`select ${organizationIsLive(sql`${organizationId}`)} as live`);
  return (result as unknown as { rows: { live: boolean }[] }).rows[0]?.live === true;
}
