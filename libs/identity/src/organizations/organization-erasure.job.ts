import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import { APP_CONFIG, type AppConfig, Clock, JobScheduler, TransactionHost } from '#platform';
import { type DataCatalogue, ident, readCatalogue, rowsOf } from './organization-data.js';
import { memberships, organizations } from './organization.schema.js';
import { OrganizationsService } from './organizations.service.js';
import { users } from '../users/user.schema.js';

/** Rows deleted per statement (and per transaction). */
export const ERASURE_BATCH = 1000;
/** Organizations read per page. */
const PAGE = 100;

export interface ErasureResult {
  organizationId: string;
  /** Rows deleted per table (organizations, memberships and the users erased with it included). */
  deleted: Record<string, number>;
  /** False when rows were left (another replica holds them, or the deletion was restored meanwhile). */
  complete: boolean;
}

/**
 * Erasure of deleted organizations: every ORG_ERASURE_INTERVAL_MS, each organization deleted more
 * than ORG_DELETION_GRACE_DAYS ago loses every row of every table with an `organization_id` column (read from the
 * catalogue, so a later table is not forgotten), `ERASURE_BATCH` rows per transaction, then, in one last
 * transaction, its memberships, the users who belonged to no other organization (with their own rows: backup
 * codes, revoked tokens, tokens and login events of no organization) and the organization row. The audit chain
 * goes with it: the export taken before is the record.
 *
 * Safe on several replicas: every batch re-reads the organization under a share lock (a restore waits for it, and
 * a restored organization is left alone), rows are picked `FOR UPDATE SKIP LOCKED`, and the organization row is
 * deleted only when no row of it is left anywhere; a run that leaves rows is finished by a later one.
 * See docs/compliance-officers.md, "Organization deletion"; test/organization-deletion.e2e-spec.ts.
 */
@Injectable()
export class OrganizationErasureJob implements OnModuleInit {
  private readonly logger = new Logger('OrganizationErasure');

  constructor(
    private readonly scheduler: JobScheduler,
    private readonly organizations: OrganizationsService,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'orgErasureIntervalMs'>,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'organization-erasure',
      intervalMs: this.config.orgErasureIntervalMs,
      run: () => this.run(),
    });
  }

  /** One pass over the organizations due for erasure. */
  async run(): Promise<ErasureResult[]> {
    const results: ErasureResult[] = [];
    let after = '';
    for (;;) {
      const page = await this.organizations.dueForErasure(after, PAGE);
      for (const organizationId of page) {
        try {
          const result = await this.erase(organizationId);
          results.push(result);
          this.logger.log(
            { organizationId, deleted: result.deleted, complete: result.complete },
            'Organization erased',
          );
        } catch (err) {
          this.logger.warn({ err, organizationId }, 'Organization erasure failed; retried at the next run');
        }
      }
      if (page.length < PAGE) return results;
      after = page[page.length - 1]!;
    }
  }

  /** Erases one organization whose grace has ended (nothing when it is not, or no longer, due). */
  async erase(organizationId: string): Promise<ErasureResult> {
    const catalogue = await readCatalogue(this.tx.db);
    const deleted: Record<string, number> = {};
    for (const table of catalogue.organizationTables) {
      // Memberships go in the last transaction: they name the users to erase with the organization.
      if (table.name === 'memberships') continue;
      for (;;) {
        const n = await this.tx.run(async () => {
          if (!(await this.stillDue(organizationId))) return -1;
          const rows = await rowsOf(
            this.tx.db,
            sql`delete from ${ident(table.name)} where ctid = any(array(
                  select ctid from ${ident(table.name)} where organization_id = ${organizationId}
                  limit ${ERASURE_BATCH} for update skip locked)) returning 1 as one`,
          );
          return rows.length;
        });
        if (n < 0) return { organizationId, deleted, complete: false };
        if (n > 0) deleted[table.name] = (deleted[table.name] ?? 0) + n;
        if (n < ERASURE_BATCH) break;
      }
    }
    const complete = await this.tx.run(() => this.finish(organizationId, catalogue, deleted));
    return { organizationId, deleted, complete };
  }

  /** Whether the organization is still deleted and past its grace; holds a share lock on it until commit. */
  private async stillDue(organizationId: string): Promise<boolean> {
    const rows = await rowsOf(
      this.tx.db,
      sql`select 1 as one from ${organizations} where ${organizations.id} = ${organizationId}
            and ${organizations.deletedAt} is not null and ${organizations.eraseAfter} <= ${this.clock.now()}
          for share`,
    );
    return rows.length > 0;
  }

  /** The last transaction: nothing may be left; memberships, orphaned users and the organization row go. */
  private async finish(
    organizationId: string,
    catalogue: DataCatalogue,
    deleted: Record<string, number>,
  ): Promise<boolean> {
    if (!(await this.stillDue(organizationId))) return false;
    for (const table of catalogue.organizationTables) {
      if (table.name === 'memberships') continue;
      const left = await rowsOf(
        this.tx.db,
        sql`select 1 as one from ${ident(table.name)} where organization_id = ${organizationId} limit 1`,
      );
      if (left.length > 0) return false;
    }
    const members = await this.tx.db
      .delete(memberships)
      .where(sql`${memberships.organizationId} = ${organizationId}`)
      .returning({ userId: memberships.userId });
    if (members.length > 0) deleted.memberships = members.length;
    const userIds = members.map((m) => m.userId);
    if (userIds.length > 0) {
      // The accounts locked first, in id order: two erasures sharing a user, or an invitation accepted by one at
      // this moment, take turns, and the statement below sees what the other committed.
      await rowsOf(
        this.tx.db,
        sql`select ${users.id} from ${users} where ${users.id} = any(${sql.param(userIds)}::text[])
            order by ${users.id} for update`,
      );
      // Users left without any membership were people of this organization only: erased with it.
      const erased = await rowsOf(
        this.tx.db,
        sql`delete from ${users} where ${users.id} = any(${sql.param(userIds)}::text[])
              and not exists (select 1 from ${memberships} m where m.user_id = ${users.id})
            returning ${users.id} as id`,
      );
      const erasedIds = erased.map((row) => String(row.id));
      if (erasedIds.length > 0) {
        deleted.users = erasedIds.length;
        for (const table of [
          ...catalogue.userTables.map((t) => ({ ...t, hasOrganizationId: false })),
          ...catalogue.organizationTables
            .filter((t) => t.hasUserId)
            .map((t) => ({ ...t, hasOrganizationId: true })),
        ]) {
          const rows = await rowsOf(
            this.tx.db,
            sql`delete from ${ident(table.name)} where user_id = any(${sql.param(erasedIds)}::text[])
                ${table.hasOrganizationId ? sql`and organization_id is null` : sql``} returning 1 as one`,
          );
          if (rows.length > 0) deleted[table.name] = (deleted[table.name] ?? 0) + rows.length;
        }
      }
    }
    await this.tx.db.delete(organizations).where(sql`${organizations.id} = ${organizationId}`);
    deleted.organizations = 1;
    return true;
  }
}
