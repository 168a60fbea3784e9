import { Injectable } from '@nestjs/common';
import { type SQL, sql } from 'drizzle-orm';
import { type Row, TransactionHost } from '#platform';
import { type DataCatalogue, ident, readCatalogue, rowsOf } from './organization-data.js';
import { memberships, organizations } from './organization.schema.js';
import { users } from '../users/user.schema.js';

/** A member's account as the export gives it: public fields only, under the database's column names. */
export interface ExportedUser {
  id: string;
  email: string;
  name: string;
  is_active: boolean;
  created_at: Date;
}

/**
 * The queries of organization erasure and of the organization export. They are the deliberate exception to "a
 * module reads only its own tables" (ARCHITECTURE.md): besides the organization, its memberships and its members'
 * accounts, they work on every table the database's catalogue shows with an `organization_id` column, by name, so
 * that a table added later is neither left behind nor left out.
 */
@Injectable()
export class OrganizationDataRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** Which tables hold organization data, and which hold a user's own rows (`readCatalogue`). */
  catalogue(): Promise<DataCatalogue> {
    return readCatalogue(this.tx.db);
  }

  /** The organization row as JSON, deleted or not; undefined when there is none. */
  async organizationRecord(organizationId: string): Promise<Record<string, unknown> | undefined> {
    const [row] = await rowsOf(
      this.tx.db,
      sql`select row_to_json(o) as r from ${organizations} o where o.id = ${organizationId}`,
    );
    return row ? (row.r as Record<string, unknown>) : undefined;
  }

  /** Up to `limit` accounts of the organization's members with an id after `after`, by id, without credentials. */
  memberUsersAfter(organizationId: string, after: string, limit: number): Promise<ExportedUser[]> {
    return this.tx.db
      .select({
        id: users.id,
        email: users.email,
        name: users.name,
        is_active: users.isActive,
        created_at: users.createdAt,
      })
      .from(users)
      .where(
        sql`${users.id} in (select ${memberships.userId} from ${memberships}
              where ${memberships.organizationId} = ${organizationId}) and ${users.id} > ${after}`,
      )
      .orderBy(users.id)
      .limit(limit);
  }

  /** Every row of the organization in a table, as JSON (for a table without a primary key to page by). */
  async tableRecords(organizationId: string, table: string): Promise<Record<string, unknown>[]> {
    const rows = await rowsOf(
      this.tx.db,
      sql`select row_to_json(t) as r from ${ident(table)} t where t.organization_id = ${organizationId}`,
    );
    return rows.map((row) => row.r as Record<string, unknown>);
  }

  /**
   * A page of the organization's rows in a table, as JSON, in `key` order after the cursor `after` (the previous
   * page's `next`); `next` is null on the last page (fewer than `limit` rows).
   */
  async tablePage(
    organizationId: string,
    table: string,
    key: readonly string[],
    after: Row | null,
    limit: number,
  ): Promise<{ records: Record<string, unknown>[]; next: Row | null }> {
    const keyColumns = sql.join(
      key.map((column) => sql`t.${ident(column)}`),
      sql`, `,
    );
    const afterKey: SQL = after
      ? sql`and (${keyColumns}) > (${sql.join(
          key.map((column) => sql`${after[`k_${column}`]}`),
          sql`, `,
        )})`
      : sql``;
    const keySelect = sql.join(
      key.map((column) => sql`t.${ident(column)}::text as ${ident(`k_${column}`)}`),
      sql`, `,
    );
    const rows = await rowsOf(
      this.tx.db,
      sql`select row_to_json(t) as r, ${keySelect} from ${ident(table)} t
          where t.organization_id = ${organizationId} ${afterKey}
          order by ${keyColumns} limit ${limit}`,
    );
    return {
      records: rows.map((row) => row.r as Record<string, unknown>),
      next: rows.length < limit ? null : rows[rows.length - 1]!,
    };
  }

  /**
   * Whether the organization is deleted and its grace over at `now`; holds a share lock on its row until commit (a
   * restore waits for it).
   */
  async lockIfDueForErasure(organizationId: string, now: Date): Promise<boolean> {
    const rows = await rowsOf(
      this.tx.db,
      sql`select 1 as one from ${organizations} where ${organizations.id} = ${organizationId}
            and ${organizations.deletedAt} is not null and ${organizations.eraseAfter} <= ${now}
          for share`,
    );
    return rows.length > 0;
  }

  /** Deletes up to `limit` of the organization's rows in a table, skipping rows other transactions hold; how many. */
  async deleteBatch(organizationId: string, table: string, limit: number): Promise<number> {
    const rows = await rowsOf(
      this.tx.db,
      sql`delete from ${ident(table)} where ctid = any(array(
            select ctid from ${ident(table)} where organization_id = ${organizationId}
            limit ${limit} for update skip locked)) returning 1 as one`,
    );
    return rows.length;
  }

  /** Whether the organization has any row left in a table. */
  async hasRows(organizationId: string, table: string): Promise<boolean> {
    const left = await rowsOf(
      this.tx.db,
      sql`select 1 as one from ${ident(table)} where organization_id = ${organizationId} limit 1`,
    );
    return left.length > 0;
  }

  /** Deletes the organization's memberships; the user id of each. */
  async deleteMemberships(organizationId: string): Promise<string[]> {
    const members = await this.tx.db
      .delete(memberships)
      .where(sql`${memberships.organizationId} = ${organizationId}`)
      .returning({ userId: memberships.userId });
    return members.map((m) => m.userId);
  }

  /** Locks the accounts, in id order, until commit. */
  async lockUsers(userIds: readonly string[]): Promise<void> {
    await rowsOf(
      this.tx.db,
      sql`select ${users.id} from ${users} where ${users.id} = any(${sql.param(userIds)}::text[])
          order by ${users.id} for update`,
    );
  }

  /** Deletes those of the accounts left without any membership; their ids. */
  async deleteUsersWithoutMembership(userIds: readonly string[]): Promise<string[]> {
    const erased = await rowsOf(
      this.tx.db,
      sql`delete from ${users} where ${users.id} = any(${sql.param(userIds)}::text[])
            and not exists (select 1 from ${memberships} m where m.user_id = ${users.id})
          returning ${users.id} as id`,
    );
    return erased.map((row) => String(row.id));
  }

  /**
   * Deletes the users' rows in a table with a `user_id` column; in a table that also has `organization_id`, only
   * their rows of no organization. How many.
   */
  async deleteUserRows(
    table: string,
    userIds: readonly string[],
    hasOrganizationId: boolean,
  ): Promise<number> {
    const rows = await rowsOf(
      this.tx.db,
      sql`delete from ${ident(table)} where user_id = any(${sql.param(userIds)}::text[])
          ${hasOrganizationId ? sql`and organization_id is null` : sql``} returning 1 as one`,
    );
    return rows.length;
  }

  async deleteOrganization(organizationId: string): Promise<void> {
    await this.tx.db.delete(organizations).where(sql`${organizations.id} = ${organizationId}`);
  }
}
