import { Injectable } from '@nestjs/common';
import { TracesRepository } from '#governance';
import {
  type Actor,
  AgentDirectory,
  AppError,
  assertAgentsOf,
  AuditLog,
  Clock,
  isObjectId,
  newId,
  type Page,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import type {
  CreateIncidentDto,
  IncidentDto,
  ListIncidentsQueryDto,
  UpdateIncidentDto,
} from './dto/incident.dto.js';
import { canMove, clockOf, deadlineOf } from './incident-clock.js';
import type { IncidentRow } from './incident.schema.js';
import { IncidentsRepository } from './incidents.repository.js';

const LIST_PAGE = { limit: 50, max: 100 };
/** Clocks of callers run a little ahead at times: an awareAt this far in the future is still accepted. */
const CLOCK_SKEW_MS = 5 * 60_000;

const target = (id: string) => ({ type: 'incident', id });

export function toIncidentResponse(row: IncidentRow, now: Date): IncidentDto {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    category: row.category,
    agentId: row.agentId,
    traceId: row.traceId,
    awareAt: row.awareAt.toISOString(),
    deadline: row.deadlineAt.toISOString(),
    status: row.status,
    reportedAt: row.reportedAt?.toISOString() ?? null,
    closedAt: row.closedAt?.toISOString() ?? null,
    ...clockOf(row.status, row.deadlineAt, now),
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * Serious incidents and their article 73 reporting clock (docs/compliance-officers.md,
 * "Incidents (EU AI Act article 73)"; test/incidents.e2e-spec.ts).
 */
@Injectable()
export class IncidentsService {
  constructor(
    private readonly repo: IncidentsRepository,
    private readonly agents: AgentDirectory,
    private readonly traces: TracesRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  async list(actor: Actor, query: ListIncidentsQueryDto): Promise<Page<IncidentDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const now = this.clock.now();
    const overdue = query.overdue === undefined ? undefined : query.overdue === 'true';
    const { rows, total } = await this.repo.list(
      actor.organizationId,
      { status: query.status, overdue, now },
      page,
    );
    return toPage(
      rows.map((row) => toIncidentResponse(row, now)),
      total,
      page,
    );
  }

  async get(actor: Actor, id: string): Promise<IncidentDto> {
    return toIncidentResponse(await this.load(actor.organizationId, id), this.clock.now());
  }

  async create(actor: Actor, dto: CreateIncidentDto, meta: RequestMeta): Promise<IncidentDto> {
    const now = this.clock.now();
    const awareAt = new Date(dto.awareAt);
    if (awareAt.getTime() > now.getTime() + CLOCK_SKEW_MS) {
      throw AppError.validation('awareAt cannot be in the future', [
        { field: 'awareAt', message: 'awareAt cannot be in the future' },
      ]);
    }
    return this.tx.run(async () => {
      const organizationId = actor.organizationId;
      if (dto.agentId !== undefined)
        await assertAgentsOf(this.agents, organizationId, [dto.agentId], 'agentId');
      if (dto.traceId !== undefined) {
        const found = isObjectId(dto.traceId) && (await this.traces.findById(organizationId, dto.traceId));
        if (!found) {
          throw AppError.validation('traceId is not a trace of this organization', [
            { field: 'traceId', message: 'traceId is not a trace of this organization' },
          ]);
        }
      }
      const row = await this.repo.insert({
        id: newId(now.getTime()),
        organizationId,
        title: dto.title,
        description: dto.description ?? null,
        category: dto.category,
        agentId: dto.agentId ?? null,
        traceId: dto.traceId ?? null,
        awareAt,
        deadlineAt: deadlineOf(dto.category, awareAt),
        status: 'open',
        createdBy: actor.userId,
        createdAt: now,
        updatedAt: now,
      });
      await this.audit.record(
        actor,
        'incident.create',
        target(row.id),
        {
          title: row.title,
          category: row.category,
          awareAt: row.awareAt.toISOString(),
          deadline: row.deadlineAt.toISOString(),
        },
        meta,
      );
      return toIncidentResponse(row, now);
    });
  }

  /**
   * Moves the incident: open → reported (reportedAt, default now) or closed; reported → closed. The current status
   * again changes nothing and writes nothing; any other move is 409 CONFLICT. Conditional on the status read, so a
   * concurrent move makes this one a 409 rather than both applying.
   */
  async update(actor: Actor, id: string, dto: UpdateIncidentDto, meta: RequestMeta): Promise<IncidentDto> {
    const now = this.clock.now();
    const current = await this.load(actor.organizationId, id);
    if (dto.reportedAt !== undefined && dto.status !== 'reported') {
      throw AppError.validation('reportedAt is only accepted with status reported', [
        { field: 'reportedAt', message: 'reportedAt is only accepted with status reported' },
      ]);
    }
    if (dto.status === current.status && dto.reportedAt === undefined) {
      return toIncidentResponse(current, now);
    }
    if (!canMove(current.status, dto.status)) {
      throw AppError.conflict(`The incident is ${current.status}; it cannot become ${dto.status}`);
    }
    const set: Partial<IncidentRow> = { status: dto.status, updatedAt: now };
    if (dto.status === 'reported') {
      const reportedAt = dto.reportedAt === undefined ? now : new Date(dto.reportedAt);
      if (reportedAt < current.awareAt || reportedAt.getTime() > now.getTime() + CLOCK_SKEW_MS) {
        throw AppError.validation('reportedAt must be between awareAt and now', [
          { field: 'reportedAt', message: 'reportedAt must be between awareAt and now' },
        ]);
      }
      set.reportedAt = reportedAt;
    }
    if (dto.status === 'closed') set.closedAt = now;
    return this.tx.run(async () => {
      const row = await this.repo.updateIn(actor.organizationId, id, current.status, set);
      if (!row) throw AppError.conflict('The incident changed meanwhile; read it again');
      await this.audit.record(
        actor,
        'incident.update',
        target(id),
        {
          from: current.status,
          to: row.status,
          reportedAt: row.reportedAt?.toISOString() ?? null,
          overdueAtChange: clockOf(current.status, current.deadlineAt, now).overdue,
        },
        meta,
      );
      return toIncidentResponse(row, now);
    });
  }

  private async load(organizationId: string, id: string): Promise<IncidentRow> {
    const row = isObjectId(id) ? await this.repo.find(organizationId, id) : undefined;
    if (!row) throw AppError.notFound('Incident');
    return row;
  }
}
