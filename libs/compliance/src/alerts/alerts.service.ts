import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AgentDirectory,
  AppError,
  assertAgentsOf,
  AuditLog,
  canEditOwnedResource,
  Clock,
  isObjectId,
  newId,
  type Page,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import { IntegrationsRepository } from '#governance';
import type { AlertMetric, AlertRuleRow } from './alert.schema.js';
import { RATE_METRICS } from './alert-metrics.js';
import { AlertsRepository } from './alerts.repository.js';
import {
  type AlertDeletedDto,
  type AlertDto,
  type AlertHistoryQueryDto,
  type AlertTransitionDto,
  type CreateAlertDto,
  type ListAlertsQueryDto,
  toAlertResponse,
  toTransitionResponse,
  type UpdateAlertDto,
} from './dto/alert.dto.js';

const LIST_PAGE = { limit: 50, max: 100 };
/** Alert rules per organization at most. */
export const MAX_ALERTS = 100;
const target = (id: string) => ({ type: 'alert', id });

/** A rate's threshold is a share: above 1 it could never be crossed upwards, and is surely a percentage typed. */
function checkThreshold(metric: AlertMetric, threshold: number): void {
  if (RATE_METRICS.includes(metric) && threshold > 1) {
    throw AppError.validation(`threshold of ${metric} is a share from 0 to 1 (0.2 for 20 %)`, [
      { field: 'threshold', message: 'must be between 0 and 1 for a rate metric' },
    ]);
  }
}

/**
 * Alert rules (docs/compliance-officers.md, "Alerts"): CRUD with the ownership rule, deletion by the owner only, and
 * their history.
 */
@Injectable()
export class AlertsService {
  constructor(
    private readonly repo: AlertsRepository,
    private readonly integrations: IntegrationsRepository,
    private readonly agents: AgentDirectory,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  async list(actor: Actor, query: ListAlertsQueryDto): Promise<Page<AlertDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.list(
      actor.organizationId,
      {
        state: query.state,
        isActive: query.isActive === undefined ? undefined : query.isActive === 'true',
      },
      page,
    );
    return toPage(rows.map(toAlertResponse), total, page);
  }

  async get(actor: Actor, id: string): Promise<AlertDto> {
    return toAlertResponse(await this.load(actor.organizationId, id));
  }

  async history(actor: Actor, id: string, query: AlertHistoryQueryDto): Promise<Page<AlertTransitionDto>> {
    await this.load(actor.organizationId, id);
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.history(actor.organizationId, id, page);
    return toPage(rows.map(toTransitionResponse), total, page);
  }

  async create(actor: Actor, dto: CreateAlertDto, meta: RequestMeta): Promise<AlertDto> {
    const org = actor.organizationId;
    checkThreshold(dto.metric, dto.threshold);
    if (dto.agentId !== undefined) await assertAgentsOf(this.agents, org, [dto.agentId], 'agentId');
    const integrationIds = dto.integrationIds ?? [];
    await this.checkIntegrations(org, integrationIds);
    const now = this.clock.now();
    return this.tx.run(async () => {
      await this.audit.lockOrganization(org);
      if ((await this.repo.count(org)) >= MAX_ALERTS) {
        throw AppError.conflict(`An organization has at most ${MAX_ALERTS} alert rules`);
      }
      const row = await this.repo.insert({
        id: newId(now.getTime()),
        organizationId: org,
        name: dto.name,
        metric: dto.metric,
        agentId: dto.agentId ?? null,
        comparison: dto.comparison,
        threshold: dto.threshold,
        windowMinutes: dto.windowMinutes,
        integrationIds,
        isActive: dto.isActive ?? true,
        state: 'ok',
        nextEvaluationAt: now,
        createdBy: actor.userId,
        createdAt: now,
        updatedAt: now,
      });
      await this.audit.record(actor, 'alert.create', target(row.id), this.described(row), meta);
      return toAlertResponse(row);
    });
  }

  async update(actor: Actor, id: string, dto: UpdateAlertDto, meta: RequestMeta): Promise<AlertDto> {
    const org = actor.organizationId;
    const existing = await this.load(org, id);
    if (!canEditOwnedResource(actor, existing.createdBy)) {
      throw AppError.forbidden('Members may change only the alert rules they created');
    }
    checkThreshold(dto.metric ?? existing.metric, dto.threshold ?? existing.threshold);
    if (typeof dto.agentId === 'string') await assertAgentsOf(this.agents, org, [dto.agentId], 'agentId');
    // Ids the rule already holds are accepted even if their integration was deleted since (they are skipped when
    // notifying), so a list read from GET can be sent back.
    if (dto.integrationIds) {
      await this.checkIntegrations(
        org,
        dto.integrationIds.filter((i) => !existing.integrationIds.includes(i)),
      );
    }
    const fields = (Object.keys(dto) as (keyof UpdateAlertDto)[]).filter((k) => dto[k] !== undefined);
    const now = this.clock.now();
    const measured = ['metric', 'agentId', 'comparison', 'threshold', 'windowMinutes', 'isActive'];
    const deactivated = dto.isActive === false;
    return this.tx.run(async () => {
      // The organization's lock before the rule's row, in the evaluator's order (no deadlock between the two).
      await this.audit.lockOrganization(org);
      const row = await this.repo.update(org, id, {
        ...(dto.name !== undefined ? { name: dto.name } : {}),
        ...(dto.metric !== undefined ? { metric: dto.metric } : {}),
        ...(dto.agentId !== undefined ? { agentId: dto.agentId } : {}),
        ...(dto.comparison !== undefined ? { comparison: dto.comparison } : {}),
        ...(dto.threshold !== undefined ? { threshold: dto.threshold } : {}),
        ...(dto.windowMinutes !== undefined ? { windowMinutes: dto.windowMinutes } : {}),
        ...(dto.integrationIds !== undefined ? { integrationIds: dto.integrationIds } : {}),
        ...(dto.isActive !== undefined ? { isActive: dto.isActive } : {}),
        // A changed measure is evaluated at the next tick; a rule switched off rests at ok.
        ...(fields.some((f) => measured.includes(f)) ? { nextEvaluationAt: now } : {}),
        ...(deactivated ? { state: 'ok' as const } : {}),
        updatedAt: now,
      });
      if (!row) throw AppError.notFound('Alert');
      await this.audit.record(actor, 'alert.update', target(id), { fields }, meta);
      return toAlertResponse(row);
    });
  }

  /** The owner only (the role table); the guard refuses the others before this runs. */
  async remove(actor: Actor, id: string, meta: RequestMeta): Promise<AlertDeletedDto> {
    if (!isObjectId(id)) throw AppError.notFound('Alert');
    return this.tx.run(async () => {
      await this.audit.lockOrganization(actor.organizationId);
      const row = await this.repo.delete(actor.organizationId, id);
      if (!row) throw AppError.notFound('Alert');
      await this.audit.record(
        actor,
        'alert.delete',
        target(id),
        { name: row.name, metric: row.metric },
        meta,
      );
      return { id, deleted: true as const };
    });
  }

  private described(row: AlertRuleRow): Record<string, unknown> {
    return {
      name: row.name,
      metric: row.metric,
      agentId: row.agentId,
      comparison: row.comparison,
      threshold: row.threshold,
      windowMinutes: row.windowMinutes,
      integrationIds: row.integrationIds,
    };
  }

  private async checkIntegrations(organizationId: string, ids: readonly string[]): Promise<void> {
    const found = await this.integrations.existingIds(organizationId, ids.filter(isObjectId));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) {
      throw AppError.validation('integrationIds must name integrations of the organization', [
        { field: 'integrationIds', message: `no integration ${missing.slice(0, 64)} in this organization` },
      ]);
    }
  }

  private async load(organizationId: string, id: string): Promise<AlertRuleRow> {
    const row = isObjectId(id) ? await this.repo.find(organizationId, id) : undefined;
    if (!row) throw AppError.notFound('Alert');
    return row;
  }
}
