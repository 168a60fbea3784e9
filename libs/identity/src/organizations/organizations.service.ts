import { Inject, Injectable } from '@nestjs/common';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  Clock,
  DATABASE,
  type DatabaseHandle,
  NotificationBus,
  type PiiMaskingSetting,
  type Plan,
  type RequestMeta,
  TransactionHost,
} from '#platform';
import {
  type DeleteOrganizationDto,
  type OrganizationDeletionDto,
  toOrganizationDeletionResponse,
} from './dto/organization-deletion.dto.js';
import {
  type OrganizationDto,
  toOrganizationResponse,
  type UpdateOrganizationDto,
} from './dto/organization.dto.js';
import { OrganizationsRepository } from './organizations.repository.js';

const DAY_MS = 86_400_000;

/**
 * Announced, on every replica, when an organization is deleted (payload: its id), from the deleting transaction's
 * commit: caches of credentials (the agent-key cache) drop what they hold, so that every key answers 401 at once.
 */
export const ORGANIZATION_DELETED_CHANNEL = 'svc_organization_deleted';

/**
 * Announces, on commit, that an organization's masking setting changed: every replica's ingestion drops its cached
 * copy (governance's `PiiMaskingSettings`), so the next trace is masked as the new setting says.
 */
export const PII_MASKING_CHANGED_CHANNEL = 'svc_pii_masking_changed';

@Injectable()
export class OrganizationsService {
  private readonly bus: NotificationBus;

  constructor(
    private readonly repo: OrganizationsRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'orgDeletionGraceDays'>,
    @Inject(DATABASE) handle: DatabaseHandle,
  ) {
    this.bus = NotificationBus.of(handle);
  }

  /** The organization's name, for documents generated without a caller (scheduled reports). */
  async nameOf(organizationId: string): Promise<string | undefined> {
    return (await this.repo.findById(organizationId))?.name;
  }

  /** The organization's masking setting, for ingestion (null: masking off). */
  piiMaskingOf(organizationId: string): Promise<PiiMaskingSetting | null> {
    return this.repo.piiMasking(organizationId);
  }

  async current(actor: Actor): Promise<OrganizationDto> {
    const row = await this.repo.findById(actor.organizationId);
    if (!row) throw AppError.notFound('Organization');
    return toOrganizationResponse(row);
  }

  update(actor: Actor, dto: UpdateOrganizationDto, meta: RequestMeta): Promise<OrganizationDto> {
    return this.tx.run(async () => {
      // Locked: concurrent changes are recorded each with the value it replaced.
      const before = await this.repo.findByIdForUpdate(actor.organizationId);
      if (!before) throw AppError.notFound('Organization');
      if (
        dto.name === undefined &&
        dto.traceRetentionDays === undefined &&
        dto.contestContact === undefined &&
        dto.piiMasking === undefined
      ) {
        const fields = 'name, traceRetentionDays, contestContact or piiMasking';
        throw AppError.validation(`Nothing to update: send ${fields}`, [
          { field: 'name', message: `send ${fields}` },
        ]);
      }
      const piiMasking =
        dto.piiMasking === undefined
          ? undefined
          : dto.piiMasking === null
            ? null
            : { entities: [...dto.piiMasking.entities], mode: dto.piiMasking.mode };
      const patch = {
        ...(dto.name !== undefined ? { name: dto.name } : {}),
        ...(dto.traceRetentionDays !== undefined ? { traceRetentionDays: dto.traceRetentionDays } : {}),
        ...(dto.contestContact !== undefined ? { contestContact: dto.contestContact } : {}),
        ...(piiMasking !== undefined ? { piiMasking } : {}),
      };
      const row = (await this.repo.update(actor.organizationId, patch, this.clock.now()))!;
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      if (dto.name !== undefined) changes.name = { from: before.name, to: row.name };
      if (dto.traceRetentionDays !== undefined) {
        changes.traceRetentionDays = { from: before.traceRetentionDays, to: row.traceRetentionDays };
      }
      if (dto.contestContact !== undefined) {
        changes.contestContact = { from: before.contestContact, to: row.contestContact };
      }
      if (Object.keys(changes).length > 0) {
        await this.audit.record(
          actor,
          'organization.updated',
          { type: 'organization', id: row.id },
          { changes },
          meta,
        );
      }
      if (piiMasking !== undefined) {
        // Its own event: what is masked decides what the service keeps of every later trace.
        await this.audit.record(
          actor,
          'organization.pii_masking_updated',
          { type: 'organization', id: row.id },
          { from: before.piiMasking ?? null, to: row.piiMasking ?? null },
          meta,
        );
        await this.bus.notify(this.tx, PII_MASKING_CHANGED_CHANNEL, row.id);
      }
      return toOrganizationResponse(row);
    });
  }

  /**
   * `DELETE /organizations/current` (owner only): `confirmName` must equal the name exactly (else 400
   * and nothing changes). Marks the organization deleted with its erasure date, writes
   * `organization.delete_requested` in the same transaction and announces the deletion to every replica's caches.
   * From the commit on, no JWT, key or invitation of the organization is accepted.
   * See docs/compliance-officers.md, "Organization deletion"; test/organization-deletion.e2e-spec.ts.
   */
  requestDeletion(
    actor: Actor,
    dto: DeleteOrganizationDto,
    meta: RequestMeta,
  ): Promise<OrganizationDeletionDto> {
    return this.tx.run(async () => {
      const before = await this.repo.findByIdForUpdate(actor.organizationId);
      if (!before || before.deletedAt) throw AppError.notFound('Organization');
      if (dto.confirmName !== before.name) {
        throw AppError.validation('confirmName must equal the organization’s name', [
          { field: 'confirmName', message: 'must equal the organization’s name exactly' },
        ]);
      }
      const now = this.clock.now();
      const eraseAfter = new Date(now.getTime() + this.config.orgDeletionGraceDays * DAY_MS);
      const row = (await this.repo.markDeleted(before.id, now, eraseAfter))!;
      await this.audit.record(
        actor,
        'organization.delete_requested',
        { type: 'organization', id: row.id },
        { name: row.name, eraseAfter: eraseAfter.toISOString(), graceDays: this.config.orgDeletionGraceDays },
        meta,
      );
      await this.bus.notify(this.tx, ORGANIZATION_DELETED_CHANNEL, row.id);
      return toOrganizationDeletionResponse(row);
    });
  }

  /**
   * Operator command (`org:restore`): clears the deletion while its grace runs. 404 when the organization is
   * unknown (or already erased), 400 when it is not deleted or its grace has ended. The row lock waits for an
   * erasure batch in progress (which holds a share lock), and the time is read after it, so a restore never
   * lands in the middle of an erasure.
   */
  restore(organizationId: string): Promise<OrganizationDto> {
    return this.tx.run(async () => {
      const before = await this.repo.findByIdForUpdate(organizationId);
      if (!before) throw AppError.notFound('Organization');
      if (!before.deletedAt) throw AppError.validation('This organization is not deleted');
      const now = this.clock.now();
      const row = await this.repo.restore(organizationId, now);
      if (!row) {
        throw AppError.validation(
          `The grace period ended at ${before.eraseAfter?.toISOString()}; the organization can no longer be restored`,
        );
      }
      await this.audit.record(
        { organizationId, actor: { type: 'system', id: 'cli', email: null } },
        'organization.restored',
        { type: 'organization', id: organizationId },
        { deletedAt: before.deletedAt.toISOString(), eraseAfter: before.eraseAfter?.toISOString() ?? null },
      );
      return toOrganizationResponse(row);
    });
  }

  /** Deleted organizations whose grace has ended, a page at a time after `afterId` (the erasure job). */
  dueForErasure(afterId: string, limit: number): Promise<string[]> {
    return this.repo.dueForErasure(this.clock.now(), afterId, limit);
  }

  /** Operator command (CLI only): no HTTP route changes plans. */
  setPlan(organizationId: string, plan: Plan): Promise<OrganizationDto> {
    return this.tx.run(async () => {
      const before = await this.repo.findById(organizationId);
      if (!before) throw AppError.notFound('Organization');
      const row = (await this.repo.update(organizationId, { plan }, this.clock.now()))!;
      await this.audit.record(
        { organizationId, actor: { type: 'system', id: 'cli', email: null } },
        'organization.plan_changed',
        { type: 'organization', id: organizationId },
        { from: before.plan, to: plan },
      );
      return toOrganizationResponse(row);
    });
  }

  /** The legacy compliance notes of one framework, keyed by clause id (stored as `framework:clauseId`). */
  async legacyComplianceNotes(organizationId: string, framework: string): Promise<Record<string, string>> {
    const prefix = `${framework}:`;
    const all = await this.repo.complianceNotes(organizationId);
    return Object.fromEntries(
      Object.entries(all)
        .filter(([key]) => key.startsWith(prefix))
        .map(([key, text]) => [key.slice(prefix.length), text]),
    );
  }

  /** Replaces the legacy compliance notes of one framework, in the caller's transaction. */
  async replaceLegacyComplianceNotes(
    organizationId: string,
    framework: string,
    notes: Record<string, string>,
  ): Promise<void> {
    const prefix = `${framework}:`;
    const entries = Object.fromEntries(Object.entries(notes).map(([id, text]) => [prefix + id, text]));
    const found = await this.repo.replaceComplianceNotes(organizationId, prefix, entries, this.clock.now());
    if (!found) throw AppError.notFound('Organization');
  }

  async list(limit: number, offset: number): Promise<OrganizationDto[]> {
    return (await this.repo.list(limit, offset)).map(toOrganizationResponse);
  }

  /** Organizations with a trace retention, a page at a time after `afterId` (the retention job). */
  withRetention(afterId: string, limit: number): Promise<Array<{ id: string; traceRetentionDays: number }>> {
    return this.repo.withRetention(afterId, limit);
  }
}
