import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, Clock, JobScheduler, TransactionHost } from '#platform';
import type { DataCatalogue } from './organization-data.js';
import { OrganizationDataRepository } from './organization-data.repository.js';
import { OrganizationsService } from './organizations.service.js';

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
    private readonly data: OrganizationDataRepository,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'orgErasureIntervalMs'>,
  ) {}

  onModuleInit(): void {
    this.scheduler.register({
      name: 'organization-erasure',
      intervalMs: this.config.orgErasureIntervalMs,
      mode: 'once-per-period',
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
    const catalogue = await this.data.catalogue();
    const deleted: Record<string, number> = {};
    for (const table of catalogue.organizationTables) {
      // Memberships go in the last transaction: they name the users to erase with the organization.
      if (table.name === 'memberships') continue;
      for (;;) {
        const n = await this.tx.run(async () => {
          if (!(await this.stillDue(organizationId))) return -1;
          return this.data.deleteBatch(organizationId, table.name, ERASURE_BATCH);
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
  private stillDue(organizationId: string): Promise<boolean> {
    return this.data.lockIfDueForErasure(organizationId, this.clock.now());
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
      if (await this.data.hasRows(organizationId, table.name)) return false;
    }
    const userIds = await this.data.deleteMemberships(organizationId);
    if (userIds.length > 0) {
      deleted.memberships = userIds.length;
      // The accounts locked first, in id order: two erasures sharing a user, or an invitation accepted by one at
      // this moment, take turns, and the statement below sees what the other committed.
      await this.data.lockUsers(userIds);
      // Users left without any membership were people of this organization only: erased with it.
      const erasedIds = await this.data.deleteUsersWithoutMembership(userIds);
      if (erasedIds.length > 0) {
        deleted.users = erasedIds.length;
        for (const table of [
          ...catalogue.userTables.map((t) => ({ ...t, hasOrganizationId: false })),
          ...catalogue.organizationTables
            .filter((t) => t.hasUserId)
            .map((t) => ({ ...t, hasOrganizationId: true })),
        ]) {
          const n = await this.data.deleteUserRows(table.name, erasedIds, table.hasOrganizationId);
          if (n > 0) deleted[table.name] = (deleted[table.name] ?? 0) + n;
        }
      }
    }
    await this.data.deleteOrganization(organizationId);
    deleted.organizations = 1;
    return true;
  }
}
