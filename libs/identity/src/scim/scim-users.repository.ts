import { Injectable } from '@nestjs/common';
import { and, asc, count, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { type Role, TransactionHost } from '#platform';
import { MembersRepository } from '../organizations/members.repository.js';
import type { ScimAttributeMap } from './scim-filter/index.js';
import { type ScimEmail, scimIdentities, type ScimIdentityRow } from './scim.schema.js';

/** A member as SCIM shows it: the account, the membership, and what the IdP said over SCIM. */
export interface ScimUserRecord {
  userId: string;
  email: string;
  name: string;
  role: Role;
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
  externalId: string | null;
  givenName: string | null;
  familyName: string | null;
  /** What this organization's IdP named the member (null: never written; the name parts or the account's show). */
  displayName: string | null;
  /** The `emails` this organization's IdP wrote, as written; null when it wrote none. */
  emails: ScimEmail[] | null;
}

/**
 * The SCIM view of an organization's members: the members module's directory subquery joined with this module's
 * `scim_identities`. Every query takes the organization id; filters come compiled with bound parameters.
 */
@Injectable()
export class ScimUsersRepository {
  constructor(
    private readonly tx: TransactionHost,
    private readonly members: MembersRepository,
  ) {}

  /** The columns a SCIM filter may name (RFC 7643 attribute paths, lower-case), for `compileScimFilter`. */
  private view(organizationId: string) {
    const d = this.members.directoryQuery(organizationId);
    const updatedAt = sql<Date>`greatest(${d.updatedAt}, coalesce(${scimIdentities.updatedAt}, ${d.updatedAt}))`;
    // What SCIM shows as displayName: this organization's, else its name parts, else the account's name.
    const displayName = sql`coalesce(${scimIdentities.displayName},
      nullif(concat_ws(' ', ${scimIdentities.givenName}, ${scimIdentities.familyName}), ''), ${d.name})`;
    // The contact address: the primary (else the first) work e-mail the IdP wrote, else the userName.
    const contactEmail = sql`coalesce((select e.value->>'value'
        from jsonb_array_elements(${scimIdentities.emails}) with ordinality as e(value, n)
        where coalesce(lower(e.value->>'type'), 'work') = 'work'
        order by (e.value->>'primary') = 'true' desc, e.n limit 1), ${d.email})`;
    const attributes: ScimAttributeMap = {
      id: { column: sql`${d.userId}`, type: 'string', caseExact: true },
      username: { column: sql`${d.email}`, type: 'string', caseExact: false },
      displayname: { column: displayName, type: 'string', caseExact: false },
      active: { column: sql`${d.active}`, type: 'boolean', caseExact: false },
      externalid: { column: scimIdentities.externalId, type: 'string', caseExact: true },
      emails: { column: contactEmail, type: 'string', caseExact: false },
      'emails.value': { column: contactEmail, type: 'string', caseExact: false },
      // Filters compare the contact address, which is a work address (Entra ID looks users up by it).
      'emails.type': { column: sql`'work'::text`, type: 'string', caseExact: false },
      'emails.primary': { column: sql`true`, type: 'boolean', caseExact: false },
      'name.givenname': { column: scimIdentities.givenName, type: 'string', caseExact: false },
      'name.familyname': { column: scimIdentities.familyName, type: 'string', caseExact: false },
      'meta.created': { column: sql`${d.createdAt}`, type: 'dateTime', caseExact: false },
      'meta.lastmodified': { column: updatedAt, type: 'dateTime', caseExact: false },
    };
    const select = {
      userId: d.userId,
      email: d.email,
      name: d.name,
      role: d.role,
      active: d.active,
      createdAt: d.createdAt,
      updatedAt: sql<Date>`${updatedAt}`.mapWith((v: string | Date) => new Date(v)),
      externalId: scimIdentities.externalId,
      givenName: scimIdentities.givenName,
      familyName: scimIdentities.familyName,
      displayName: scimIdentities.displayName,
      emails: scimIdentities.emails,
    };
    const join = and(eq(scimIdentities.organizationId, organizationId), eq(scimIdentities.userId, d.userId));
    return { d, attributes, select, join };
  }

  attributes(organizationId: string): ScimAttributeMap {
    return this.view(organizationId).attributes;
  }

  /** A page of members (oldest membership first) matching `where`, and how many match in all. */
  async list(
    organizationId: string,
    where: SQL | undefined,
    offset: number,
    limit: number,
  ): Promise<{ rows: ScimUserRecord[]; total: number }> {
    const { d, select, join } = this.view(organizationId);
    const [totals] = await this.tx.db
      .select({ total: count() })
      .from(d)
      .leftJoin(scimIdentities, join)
      .where(where);
    const rows =
      limit === 0
        ? []
        : await this.tx.db
            .select(select)
            .from(d)
            .leftJoin(scimIdentities, join)
            .where(where)
            .orderBy(asc(d.createdAt), asc(d.userId))
            .offset(offset)
            .limit(limit);
    return { rows, total: totals?.total ?? 0 };
  }

  async find(organizationId: string, userId: string): Promise<ScimUserRecord | undefined> {
    const { d, select, join } = this.view(organizationId);
    const [row] = await this.tx.db
      .select(select)
      .from(d)
      .leftJoin(scimIdentities, join)
      .where(eq(d.userId, userId))
      .limit(1);
    return row;
  }

  /** The members with a role, oldest membership first, at most `limit`. */
  async withRole(organizationId: string, role: Role, limit: number): Promise<ScimUserRecord[]> {
    const { d, select, join } = this.view(organizationId);
    return this.tx.db
      .select(select)
      .from(d)
      .leftJoin(scimIdentities, join)
      .where(eq(d.role, role))
      .orderBy(asc(d.createdAt), asc(d.userId))
      .limit(limit);
  }

  /** The roles of those of `userIds` who are members of the organization. */
  async rolesOf(organizationId: string, userIds: string[]): Promise<Map<string, Role>> {
    if (userIds.length === 0) return new Map();
    const d = this.members.directoryQuery(organizationId);
    const rows = await this.tx.db
      .select({ userId: d.userId, role: d.role })
      .from(d)
      .where(inArray(d.userId, userIds));
    return new Map(rows.map((r) => [r.userId, r.role]));
  }

  /** Writes what the IdP said of the member (insert or replace). */
  async upsertIdentity(row: ScimIdentityRow): Promise<void> {
    await this.tx.db
      .insert(scimIdentities)
      .values(row)
      .onConflictDoUpdate({
        target: [scimIdentities.organizationId, scimIdentities.userId],
        set: {
          externalId: row.externalId,
          givenName: row.givenName,
          familyName: row.familyName,
          displayName: row.displayName,
          emails: row.emails,
          updatedAt: row.updatedAt,
        },
      });
  }
}
