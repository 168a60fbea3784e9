import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  type Plan,
  type RequestMeta,
  TransactionHost,
} from '#platform';
import {
  type OrganizationDto,
  toOrganizationResponse,
  type UpdateOrganizationDto,
} from './dto/organization.dto.js';
import { OrganizationsRepository } from './organizations.repository.js';

@Injectable()
export class OrganizationsService {
  constructor(
    private readonly repo: OrganizationsRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /** The organization's name, for documents generated without a caller (scheduled reports). */
  async nameOf(organizationId: string): Promise<string | undefined> {
    return (await this.repo.findById(organizationId))?.name;
  }

  async current(actor: Actor): Promise<OrganizationDto> {
    const row = await this.repo.findById(actor.organizationId);
    if (!row) throw AppError.notFound('Organization');
    return toOrganizationResponse(row);
  }

  update(actor: Actor, dto: UpdateOrganizationDto, meta: RequestMeta): Promise<OrganizationDto> {
    return this.tx.run(async () => {
      const before = await this.repo.findById(actor.organizationId);
      if (!before) throw AppError.notFound('Organization');
      if (dto.name === undefined && dto.traceRetentionDays === undefined) {
        throw AppError.validation('Nothing to update: send name or traceRetentionDays', [
          { field: 'name', message: 'send name or traceRetentionDays' },
        ]);
      }
      const patch = {
        ...(dto.name !== undefined ? { name: dto.name } : {}),
        ...(dto.traceRetentionDays !== undefined ? { traceRetentionDays: dto.traceRetentionDays } : {}),
      };
      const row = (await this.repo.update(actor.organizationId, patch, this.clock.now()))!;
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      if (dto.name !== undefined) changes.name = { from: before.name, to: row.name };
      if (dto.traceRetentionDays !== undefined) {
        changes.traceRetentionDays = { from: before.traceRetentionDays, to: row.traceRetentionDays };
      }
      await this.audit.record(
        actor,
        'organization.updated',
        { type: 'organization', id: row.id },
        { changes },
        meta,
      );
      return toOrganizationResponse(row);
    });
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
