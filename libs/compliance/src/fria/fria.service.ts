import { Injectable } from '@nestjs/common';
import { AuditService } from '#governance';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  DomainEvents,
  isObjectId,
  newId,
  type Page,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import {
  type CreateFriaDto,
  type FriaDeletedDto,
  type FriaDto,
  type FriaHistoryEntryDto,
  type FriaHistoryQueryDto,
  type FriaVerificationDto,
  type ListFriaQueryDto,
  type UpdateFriaDto,
} from './dto/fria.dto.js';
import {
  canTransition,
  collapseWizardRisks,
  completeness,
  contentsOf,
  friaHash,
  withRiskDefaults,
} from './fria.contents.js';
import { FriaErrorCode, friaOperation } from './fria.errors.js';
import { FriaRepository } from './fria.repository.js';
import type { FriaRisk, FriaRow, FriaStatus } from './fria.schema.js';

const LIST_PAGE = { limit: 50, max: 100 };
const HISTORY_PAGE = { limit: 50, max: 200 };
const APPROVERS = ['owner', 'admin'];
const EDITABLE_FIELDS = [
  'systemName',
  'deployerProfileId',
  'purpose',
  'affectedPersons',
  'usageContext',
  'durationOfUse',
  'humanOversightSummary',
  'complaintsMechanism',
] as const;

const target = (id: string) => ({ type: 'fria', id });

export function toFriaResponse(row: FriaRow): FriaDto {
  return {
    id: row.id,
    organizationId: row.organizationId,
    ...contentsOf(row),
    status: row.status,
    chainHash: row.chainHash,
    approvedBy: row.approvedBy,
    approvedAt: row.approvedAt?.toISOString() ?? null,
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    completeness: completeness(contentsOf(row)),
  };
}

/**
 * The risks an input sets, or undefined when it sets none: structured rows, or the wizard's two free-text fields
 * collapsed into one row. Both at once is ambiguous and refused.
 * See docs/compliance-officers.md, "Fundamental-rights impact assessments (FRIA)".
 */
function risksOf(dto: CreateFriaDto | UpdateFriaDto, current: FriaRisk[] = []): FriaRisk[] | undefined {
  const wizard = dto.risksIdentified !== undefined || dto.mitigations !== undefined;
  if (wizard && dto.identifiedRisks !== undefined) {
    throw AppError.validation(
      'Send identifiedRisks or the wizard fields risksIdentified/mitigations, not both',
      [
        {
          field: 'identifiedRisks',
          message: 'identifiedRisks cannot be combined with risksIdentified or mitigations',
        },
      ],
    );
  }
  if (wizard) return collapseWizardRisks(dto.risksIdentified, dto.mitigations, current);
  return dto.identifiedRisks?.map(withRiskDefaults);
}

/**
 * Fundamental-rights impact assessments (docs/compliance-officers.md,
 * "Fundamental-rights impact assessments (FRIA)"): contents, states and the anchored hash.
 */
@Injectable()
export class FriaService {
  constructor(
    private readonly repo: FriaRepository,
    private readonly audit: AuditLog,
    private readonly events: DomainEvents,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly auditEntries: AuditService,
  ) {}

  list(actor: Actor, query: ListFriaQueryDto): Promise<Page<FriaDto>> {
    return friaOperation(FriaErrorCode.FRIA_LIST_FAILED, async () => {
      const page = pageRequest(query, LIST_PAGE);
      const { rows, total } = await this.repo.list(
        actor.organizationId,
        { status: query.status, search: query.search },
        page,
      );
      return toPage(rows.map(toFriaResponse), total, page);
    });
  }

  get(actor: Actor, id: string): Promise<FriaDto> {
    return friaOperation(FriaErrorCode.FRIA_GET_FAILED, async () =>
      toFriaResponse(await this.load(actor.organizationId, id)),
    );
  }

  /**
   * Recomputes the hash of the stored contents and compares it with the anchor. In review after edits it differs
   * by design: the anchor is the submitted version's.
   */
  verify(actor: Actor, id: string): Promise<FriaVerificationDto> {
    return friaOperation(FriaErrorCode.FRIA_GET_FAILED, async () => {
      const row = await this.load(actor.organizationId, id);
      const computedHash = friaHash(contentsOf(row));
      return {
        id: row.id,
        status: row.status,
        anchoredHash: row.chainHash,
        computedHash,
        matches: row.chainHash === null ? null : row.chainHash === computedHash,
      };
    });
  }

  /**
   * The assessment's audit entries, oldest first, without ip or user agent: history is visible to every role,
   * the full audit log only to owners and admins.
   */
  history(actor: Actor, id: string, query: FriaHistoryQueryDto): Promise<Page<FriaHistoryEntryDto>> {
    return friaOperation(FriaErrorCode.FRIA_GET_FAILED, async () => {
      await this.load(actor.organizationId, id);
      const page = pageRequest(query, HISTORY_PAGE);
      const { rows, total } = await this.auditEntries.entriesForTarget(
        actor.organizationId,
        'fria',
        id,
        page,
      );
      return toPage(
        rows.map((row) => ({
          id: row.id,
          sequence: row.sequence,
          eventType: row.eventType,
          actor: { type: row.actor.type, id: row.actor.id, email: row.actor.email },
          metadata: row.metadata,
          createdAt: row.createdAt.toISOString(),
          hash: row.hash,
        })),
        total,
        page,
      );
    });
  }

  create(actor: Actor, dto: CreateFriaDto, meta: RequestMeta): Promise<FriaDto> {
    return friaOperation(FriaErrorCode.FRIA_CREATE_FAILED, async () => {
      const risks = risksOf(dto) ?? [];
      return this.tx.run(async () => {
        const now = this.clock.now();
        const row = await this.repo.insert({
          id: newId(now.getTime()),
          organizationId: actor.organizationId,
          systemName: dto.systemName,
          deployerProfileId: dto.deployerProfileId ?? null,
          purpose: dto.purpose ?? null,
          affectedPersons: dto.affectedPersons ?? null,
          usageContext: dto.usageContext ?? null,
          durationOfUse: dto.durationOfUse ?? null,
          identifiedRisks: risks,
          humanOversightSummary: dto.humanOversightSummary ?? null,
          complaintsMechanism: dto.complaintsMechanism ?? null,
          status: 'draft',
          createdBy: actor.userId,
          createdAt: now,
          updatedAt: now,
        });
        await this.audit.record(actor, 'fria.create', target(row.id), { systemName: row.systemName }, meta);
        return toFriaResponse(row);
      });
    });
  }

  /**
   * Edits a draft or an assessment in review. In review the anchored hash stays: it is the submitted version's.
   * The update is conditional on the state read, so a concurrent move makes it a 409 rather than a lost edit.
   */
  update(actor: Actor, id: string, dto: UpdateFriaDto, meta: RequestMeta): Promise<FriaDto> {
    return friaOperation(FriaErrorCode.FRIA_UPDATE_FAILED, async () => {
      const current = await this.load(actor.organizationId, id);
      if (current.status !== 'draft' && current.status !== 'review') {
        throw AppError.conflict(
          `The assessment is ${current.status}; only a draft or one in review can be edited`,
        );
      }
      const set: Record<string, unknown> = {};
      for (const field of EDITABLE_FIELDS) {
        if (dto[field] !== undefined) set[field] = dto[field];
      }
      const risks = risksOf(dto, current.identifiedRisks);
      if (risks !== undefined) set.identifiedRisks = risks;
      const changed = Object.keys(set);
      return this.tx.run(async () => {
        const row = await this.repo.updateIn(actor.organizationId, id, current.status, {
          ...set,
          updatedAt: this.clock.now(),
        });
        if (!row) throw AppError.conflict('The assessment changed state meanwhile; read it again');
        await this.audit.record(actor, 'fria.update', target(id), { changed }, meta);
        return toFriaResponse(row);
      });
    });
  }

  /**
   * One move of the lifecycle (`canTransition`). Entering review or approved anchors the hash of the current
   * contents; approval also stamps the approver. Conditional on the state read, so of two concurrent moves only one
   * applies. See docs/compliance-officers.md, "Fundamental-rights impact assessments (FRIA)";
   * test/fria-lifecycle.e2e-spec.ts.
   */
  transition(actor: Actor, id: string, to: FriaStatus, meta: RequestMeta): Promise<FriaDto> {
    return friaOperation(FriaErrorCode.FRIA_UPDATE_FAILED, async () => {
      const current = await this.load(actor.organizationId, id);
      if (to === 'approved' && !APPROVERS.includes(actor.role ?? '')) {
        throw AppError.forbidden('Only an owner or admin can approve an assessment');
      }
      if (!canTransition(current.status, to)) throw this.refused(current.status, to);
      return this.tx.run(async () => {
        const now = this.clock.now();
        const set: Parameters<FriaRepository['updateIn']>[3] = { status: to, updatedAt: now };
        if (to === 'review' || to === 'approved') set.chainHash = friaHash(contentsOf(current));
        if (to === 'review' && !current.firstSubmittedAt) set.firstSubmittedAt = now;
        if (to === 'approved') {
          set.approvedBy = actor.userId;
          set.approvedAt = now;
        }
        const row = await this.repo.updateIn(actor.organizationId, id, current.status, set);
        if (!row) throw this.refused(current.status, to);
        await this.audit.record(
          actor,
          'fria.transition',
          target(id),
          { from: current.status, to, chainHash: row.chainHash },
          meta,
        );
        if (to === 'approved') {
          await this.events.publish([
            {
              organizationId: actor.organizationId,
              type: 'fria.approved',
              data: {
                id: row.id,
                systemName: row.systemName,
                chainHash: row.chainHash,
                approvedBy: row.approvedBy,
                approvedAt: row.approvedAt?.toISOString() ?? null,
              },
            },
          ]);
        }
        return toFriaResponse(row);
      });
    });
  }

  /** Deletes a draft never submitted; anything else is 404, as if absent (test/fria-lifecycle.e2e-spec.ts). */
  remove(actor: Actor, id: string, meta: RequestMeta): Promise<FriaDeletedDto> {
    return friaOperation(FriaErrorCode.FRIA_DELETE_FAILED, async () => {
      if (!isObjectId(id)) throw AppError.notFound('Assessment');
      return this.tx.run(async () => {
        const row = await this.repo.deleteUnsubmittedDraft(actor.organizationId, id);
        if (!row) throw AppError.notFound('Assessment');
        await this.audit.record(actor, 'fria.delete', target(id), { systemName: row.systemName }, meta);
        return { id, deleted: true as const };
      });
    });
  }

  private async load(organizationId: string, id: string): Promise<FriaRow> {
    if (!isObjectId(id)) throw AppError.notFound('Assessment');
    const row = await this.repo.find(organizationId, id);
    if (!row) throw AppError.notFound('Assessment');
    return row;
  }

  private refused(from: FriaStatus, to: FriaStatus): AppError {
    return new AppError(
      400,
      FriaErrorCode.FRIA_TRANSITION_FAILED,
      `An assessment cannot move from ${from} to ${to}`,
    );
  }
}
