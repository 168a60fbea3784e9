import { Injectable } from '@nestjs/common';
import { and, asc, eq, gt, isNotNull, isNull, lte, sql } from 'drizzle-orm';
import { type Role, TransactionHost } from '#platform';
import { revokedTokens, sessions } from '../sessions/session.schema.js';
import { users } from '../users/user.schema.js';
import {
  memberships,
  type MembershipRow,
  organizations,
  type OrganizationRow,
} from './organization.schema.js';

/** An organization the user can act in, with the role held there. */
export interface UserOrganization {
  organizationId: string;
  name: string;
  role: Role;
  plan: OrganizationRow['plan'];
}

export interface SessionPrincipal {
  revoked: boolean;
  userId: string | null;
  email: string | null;
  userActive: boolean | null;
  membershipActive: boolean | null;
  role: Role | null;
  plan: OrganizationRow['plan'] | null;
  /** The membership was deactivated over SCIM (its sessions read only). */
  deactivatedByScim: boolean;
  /** The session was opened by this organization's SSO for an account another organization, or nobody, created. */
  ssoScoped: boolean;
}

interface PrincipalRow {
  revoked: boolean;
  user_id: string | null;
  email: string | null;
  user_active: boolean | null;
  membership_active: boolean | null;
  role: Role | null;
  plan: OrganizationRow['plan'] | null;
  deactivated_by_scim: boolean | null;
  sso_scoped: boolean | null;
}

@Injectable()
export class OrganizationsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(row: typeof organizations.$inferInsert): Promise<OrganizationRow> {
    const [inserted] = await this.tx.db.insert(organizations).values(row).returning();
    return inserted!;
  }

  async findById(id: string): Promise<OrganizationRow | undefined> {
    const [row] = await this.tx.db.select().from(organizations).where(eq(organizations.id, id)).limit(1);
    return row;
  }

  async list(limit: number, offset: number): Promise<OrganizationRow[]> {
    return this.tx.db
      .select()
      .from(organizations)
      .orderBy(asc(organizations.createdAt))
      .limit(limit)
      .offset(offset);
  }

  async update(
    id: string,
    patch: Partial<
      Pick<OrganizationRow, 'name' | 'plan' | 'traceRetentionDays' | 'contestContact' | 'piiMasking'>
    >,
    at: Date,
  ): Promise<OrganizationRow | undefined> {
    const [row] = await this.tx.db
      .update(organizations)
      .set({ ...patch, updatedAt: at })
      .where(eq(organizations.id, id))
      .returning();
    return row;
  }

  /** The organization's masking setting (null: off, or no such organization). */
  async piiMasking(organizationId: string): Promise<OrganizationRow['piiMasking']> {
    const [row] = await this.tx.db
      .select({ piiMasking: organizations.piiMasking })
      .from(organizations)
      .where(eq(organizations.id, organizationId));
    return row?.piiMasking ?? null;
  }

  /** The SSO configuration and role-mapping rules of a live organization (the SSO module's reads). */
  async ssoFields(
    organizationId: string,
  ): Promise<Pick<OrganizationRow, 'ssoConfig' | 'roleMappingRules'> | undefined> {
    const [row] = await this.tx.db
      .select({ ssoConfig: organizations.ssoConfig, roleMappingRules: organizations.roleMappingRules })
      .from(organizations)
      .where(and(eq(organizations.id, organizationId), isNull(organizations.deletedAt)))
      .limit(1);
    return row;
  }

  /** Replaces them (null clears the configuration). */
  async setSsoFields(
    organizationId: string,
    ssoConfig: Record<string, unknown> | null,
    roleMappingRules: { pattern: string; role: string }[],
    at: Date,
  ): Promise<void> {
    await this.tx.db
      .update(organizations)
      .set({ ssoConfig, roleMappingRules, updatedAt: at })
      .where(eq(organizations.id, organizationId));
  }

  /** The legacy `complianceNotes` map of the organization (empty when it has none). */
  async complianceNotes(organizationId: string): Promise<Record<string, string>> {
    const [row] = await this.tx.db
      .select({ notes: organizations.complianceNotes })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .limit(1);
    return row?.notes ?? {};
  }

  /**
   * Replaces the entries whose key starts with the prefix by the given ones, leaving every other key, in one
   * statement so concurrent writers of different prefixes never lose each other's entries.
   */
  async replaceComplianceNotes(
    organizationId: string,
    prefix: string,
    entries: Record<string, string>,
    at: Date,
  ): Promise<boolean> {
    const o = organizations;
    const rows = await this.tx.db
      .update(o)
      .set({
        complianceNotes: sql`(select coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb)
          from jsonb_each(${o.complianceNotes}) as e
          where left(e.key, ${prefix.length}) <> ${prefix}) || ${JSON.stringify(entries)}::jsonb`,
        updatedAt: at,
      })
      .where(eq(o.id, organizationId))
      .returning({ id: o.id });
    return rows.length > 0;
  }

  async insertMembership(row: typeof memberships.$inferInsert): Promise<MembershipRow> {
    const [inserted] = await this.tx.db.insert(memberships).values(row).returning();
    return inserted!;
  }

  /**
   * Memberships of a user in organizations that are not deleted, oldest first: what login picks from and where
   * a user's own audit entries go. A deleted organization's memberships count as gone until it is restored.
   */
  async membershipsOf(userId: string): Promise<MembershipRow[]> {
    const rows = await this.tx.db
      .select({ membership: memberships })
      .from(memberships)
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(and(eq(memberships.userId, userId), isNull(organizations.deletedAt)))
      .orderBy(asc(memberships.createdAt), asc(memberships.id));
    return rows.map((row) => row.membership);
  }

  /** Whether the user holds an active membership in a deleted (not yet erased) organization: login explains it. */
  async hasActiveMembershipInDeleted(userId: string): Promise<boolean> {
    const [row] = await this.tx.db
      .select({ id: memberships.id })
      .from(memberships)
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(
        and(
          eq(memberships.userId, userId),
          eq(memberships.isActive, true),
          isNotNull(organizations.deletedAt),
        ),
      )
      .limit(1);
    return row !== undefined;
  }

  /**
   * Everything the access guard needs about a JWT in one round trip: whether its jti is revoked, and the
   * user, membership and plan it points at (null columns when the membership no longer exists; a null plan when
   * the organization is deleted, which the guard answers with 401).
   */
  async sessionPrincipal(jti: string, organizationId: string, userId: string): Promise<SessionPrincipal> {
    const result = await this.tx.db.execute(sql`
      select exists(select 1 from ${revokedTokens} where ${revokedTokens.jti} = ${jti}) as revoked,
             u.id as user_id, u.email, u.is_active as user_active,
             (m.is_active or m.deactivated_by = 'scim') as membership_active, m.role, o.plan,
             (not m.is_active and m.deactivated_by = 'scim') as deactivated_by_scim,
             (s.sso_pinned and u.origin_organization_id is distinct from m.organization_id) as sso_scoped
      from (select 1) as one
      left join ${memberships} m on m.organization_id = ${organizationId} and m.user_id = ${userId}
      left join ${users} u on u.id = m.user_id
      left join ${organizations} o on o.id = m.organization_id and o.deleted_at is null
      left join ${sessions} s on s.jti = ${jti}`);
    const row = (result as unknown as { rows: PrincipalRow[] }).rows[0]!;
    return {
      revoked: row.revoked,
      userId: row.user_id,
      email: row.email,
      userActive: row.user_active,
      membershipActive: row.membership_active,
      role: row.role,
      plan: row.plan,
      deactivatedByScim: row.deactivated_by_scim === true,
      ssoScoped: row.sso_scoped === true,
    };
  }

  /** Records a sign-in into the organization on the membership (what its member list shows). */
  async recordMembershipLogin(
    organizationId: string,
    userId: string,
    ip: string | null,
    at: Date,
  ): Promise<void> {
    await this.tx.db
      .update(memberships)
      .set({ lastLoginIp: ip, lastLoginAt: at })
      .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  }

  async membership(organizationId: string, userId: string): Promise<MembershipRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(memberships)
      .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)))
      .limit(1);
    return row;
  }

  /** The organizations (not deleted) where the user's membership is active, oldest membership first. */
  async activeOrganizationsOf(userId: string): Promise<UserOrganization[]> {
    return this.tx.db
      .select({
        organizationId: organizations.id,
        name: organizations.name,
        role: memberships.role,
        plan: organizations.plan,
      })
      .from(memberships)
      .innerJoin(organizations, eq(organizations.id, memberships.organizationId))
      .where(
        and(eq(memberships.userId, userId), eq(memberships.isActive, true), isNull(organizations.deletedAt)),
      )
      .orderBy(asc(memberships.createdAt), asc(memberships.id));
  }

  /**
   * Reads the organization and locks its row until the transaction ends. Team mutations take this lock first,
   * so that checks over several memberships (the last active owner) and the write that follows are serialised
   * per organization. `no key update` does not block inserts that reference the row (memberships, audit).
   */
  async findByIdForUpdate(id: string): Promise<OrganizationRow | undefined> {
    const [row] = await this.tx.db
      .select()
      .from(organizations)
      .where(eq(organizations.id, id))
      .limit(1)
      .for('no key update');
    return row;
  }

  /** Organizations that keep traces for a limited time, by id after `afterId` (the retention job pages through). */
  async withRetention(
    afterId: string,
    limit: number,
  ): Promise<Array<{ id: string; traceRetentionDays: number }>> {
    const rows = await this.tx.db
      .select({ id: organizations.id, traceRetentionDays: organizations.traceRetentionDays })
      .from(organizations)
      .where(
        and(
          isNotNull(organizations.traceRetentionDays),
          isNull(organizations.deletedAt),
          gt(organizations.id, afterId),
        ),
      )
      .orderBy(organizations.id)
      .limit(limit);
    return rows.map((r) => ({ id: r.id, traceRetentionDays: r.traceRetentionDays! }));
  }

  /**
   * Marks the organization deleted unless it already is; undefined when it is unknown or already
   * deleted. Every credential of it is refused from the commit on.
   * See docs/compliance-officers.md, "Organization deletion".
   */
  async markDeleted(id: string, at: Date, eraseAfter: Date): Promise<OrganizationRow | undefined> {
    const [row] = await this.tx.db
      .update(organizations)
      .set({ deletedAt: at, eraseAfter, updatedAt: at })
      .where(and(eq(organizations.id, id), isNull(organizations.deletedAt)))
      .returning();
    return row;
  }

  /** Clears the deletion while its grace runs (`eraseAfter` later than `now`); undefined otherwise. */
  async restore(id: string, now: Date): Promise<OrganizationRow | undefined> {
    const [row] = await this.tx.db
      .update(organizations)
      .set({ deletedAt: null, eraseAfter: null, updatedAt: now })
      .where(
        and(eq(organizations.id, id), isNotNull(organizations.deletedAt), gt(organizations.eraseAfter, now)),
      )
      .returning();
    return row;
  }

  /** Deleted organizations whose grace has ended, by id after `afterId` (the erasure job pages through). */
  async dueForErasure(now: Date, afterId: string, limit: number): Promise<string[]> {
    const rows = await this.tx.db
      .select({ id: organizations.id })
      .from(organizations)
      .where(
        and(
          isNotNull(organizations.deletedAt),
          lte(organizations.eraseAfter, now),
          gt(organizations.id, afterId),
        ),
      )
      .orderBy(organizations.id)
      .limit(limit);
    return rows.map((row) => row.id);
  }
}
