import { Injectable } from '@nestjs/common';
import { and, asc, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import { type PageRequest, type Role, pageWithTotal, TransactionHost } from '#platform';
import { memberships, type MembershipRow, organizations } from './organization.schema.js';
import { users } from '../users/user.schema.js';

/** A membership with the user columns the member list shows: never a hash or secret. */
export interface MemberView {
  userId: string;
  name: string;
  email: string;
  role: Role;
  joinedAt: Date;
  isActive: boolean;
  mfaEnabled: boolean;
  lastLoginIp: string | null;
  createdAt: Date;
}

const MEMBER = {
  userId: memberships.userId,
  name: users.name,
  email: users.email,
  role: memberships.role,
  joinedAt: memberships.createdAt,
  isActive: memberships.isActive,
  mfaEnabled: users.mfaEnabled,
  // This organization's last sign-in of the member: another organization's is not this one's to see.
  lastLoginIp: memberships.lastLoginIp,
  createdAt: users.createdAt,
};

/**
 * Memberships with the user columns the member list shows, for the team module: the organizations module owns
 * memberships (and the identity core the users table). Every method takes the organization id.
 */
@Injectable()
export class MembersRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** Members of the organization, oldest membership first. */
  async list(organizationId: string, page: PageRequest): Promise<{ rows: MemberView[]; total: number }> {
    const where = eq(memberships.organizationId, organizationId);
    return pageWithTotal(
      this.tx.db,
      memberships,
      where,
      this.tx.db
        .select(MEMBER)
        .from(memberships)
        .innerJoin(users, eq(users.id, memberships.userId))
        .where(where)
        .orderBy(asc(memberships.createdAt), asc(memberships.id))
        .limit(page.limit)
        .offset(page.offset),
    );
  }

  /** The member, unless there is none or the organization is deleted (the event stream's check of a stream token). */
  async findMember(organizationId: string, userId: string): Promise<MemberView | undefined> {
    const [row] = await this.tx.db
      .select(MEMBER)
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(
        and(
          eq(memberships.organizationId, organizationId),
          eq(memberships.userId, userId),
          isNull(organizations.deletedAt),
        ),
      )
      .limit(1);
    return row;
  }

  /** Whether the user with this (normalised) e-mail holds a membership, active or suspended. */
  async hasMemberWithEmail(organizationId: string, email: string): Promise<boolean> {
    const [row] = await this.tx.db
      .select({ id: memberships.id })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.organizationId, organizationId), eq(users.email, email)))
      .limit(1);
    return row !== undefined;
  }

  /**
   * The e-mails of the active members (active membership, active user) holding one of `roles`, oldest membership
   * first, at most `limit`: the recipients of an organization's notices. None for a deleted organization: nobody
   * is written to on its behalf while it awaits erasure.
   */
  async listEmailsByRoles(organizationId: string, roles: readonly Role[], limit = 200): Promise<string[]> {
    if (roles.length === 0) return [];
    const rows = await this.tx.db
      .select({ email: users.email })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(
        and(
          eq(memberships.organizationId, organizationId),
          inArray(memberships.role, [...roles]),
          eq(memberships.isActive, true),
          eq(users.isActive, true),
          isNull(organizations.deletedAt),
        ),
      )
      .orderBy(asc(memberships.createdAt), asc(memberships.id))
      .limit(limit);
    return rows.map((row) => row.email);
  }

  async countActiveOwners(organizationId: string): Promise<number> {
    const [row] = await this.tx.db
      .select({ total: count() })
      .from(memberships)
      .where(
        and(
          eq(memberships.organizationId, organizationId),
          eq(memberships.role, 'owner'),
          eq(memberships.isActive, true),
        ),
      );
    return row?.total ?? 0;
  }

  async updateRole(organizationId: string, userId: string, role: Role, at: Date): Promise<void> {
    await this.tx.db
      .update(memberships)
      .set({ role, updatedAt: at })
      .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  }

  /**
   * Suspends or restores a membership. `by: 'scim'` marks a SCIM deactivation, which leaves open sessions valid
   * (see `memberships.deactivatedBy`); any other change clears the mark.
   */
  async setActive(
    organizationId: string,
    userId: string,
    isActive: boolean,
    at: Date,
    by?: 'scim',
  ): Promise<void> {
    await this.tx.db
      .update(memberships)
      .set({ isActive, deactivatedBy: isActive ? null : (by ?? null), updatedAt: at })
      .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  }

  /**
   * The organization's members as a directory (SCIM reads it): a subquery with one row per membership and the
   * columns `userId`, `email`, `name`, `role`, `active` (the membership's), `createdAt` (the membership's) and
   * `updatedAt` (the later of the membership's and the account's), for the caller to join, filter and page. The
   * column names carry a `directory_` prefix, so that a join with another table's `user_id` stays unambiguous.
   */
  directoryQuery(organizationId: string) {
    return this.tx.db
      .select({
        userId: sql<string>`${memberships.userId}`.as('directory_user_id'),
        email: sql<string>`${users.email}`.as('directory_email'),
        name: sql<string>`${users.name}`.as('directory_name'),
        role: sql<Role>`${memberships.role}`.as('directory_role'),
        active: sql<boolean>`${memberships.isActive}`.as('directory_active'),
        createdAt: sql<Date>`${memberships.createdAt}`
          .mapWith((v: string | Date) => new Date(v))
          .as('directory_created_at'),
        updatedAt: sql<Date>`greatest(${memberships.updatedAt}, ${users.updatedAt})`
          .mapWith((v: string | Date) => new Date(v))
          .as('directory_updated_at'),
      })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(eq(memberships.organizationId, organizationId))
      .as('directory');
  }

  /** Deletes the membership (the user row stays); false when there was none. */
  async remove(organizationId: string, userId: string): Promise<boolean> {
    const rows = await this.tx.db
      .delete(memberships)
      .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)))
      .returning({ id: memberships.id });
    return rows.length === 1;
  }

  /** Inserts unless the user already has a membership here; undefined on that conflict (no aborted transaction). */
  async insertIfAbsent(row: typeof memberships.$inferInsert): Promise<MembershipRow | undefined> {
    const [inserted] = await this.tx.db
      .insert(memberships)
      .values(row)
      .onConflictDoNothing({ target: [memberships.organizationId, memberships.userId] })
      .returning();
    return inserted;
  }
}
