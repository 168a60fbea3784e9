import { Injectable } from '@nestjs/common';
import {
  type Actor,
  agentScopeOf,
  AppError,
  AuditLog,
  Clock,
  DomainEvents,
  isObjectId,
  type Page,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import { MembersRepository } from '#identity';
import { ApprovalPatternsService } from '../approval-patterns/approval-patterns.service.js';
import { signatureOf } from '../approval-patterns/approval-pattern.signature.js';
import { PiiMasking } from '../traces/pii-masking.js';
import { TraceErrorCode } from '../traces/traces.errors.js';
import { type TraceExcerpt, TracesRepository } from '../traces/traces.repository.js';
import type { ReviewItemRow, ReviewStatus } from './review-item.schema.js';
import { VerdictRollups } from '../cpi/verdict-rollups.js';
import { auditDetailsOf } from './review-audit.js';
import { ReviewItemsRepository } from './review-items.repository.js';
import { ReviewErrorCode } from './review.errors.js';
import {
  type AssignReviewItemDto,
  type BulkDecisionResultDto,
  type BulkReviewDecisionDto,
  type ListReviewQueueQueryDto,
  type ReviewDecision,
  type ReviewDecisionDto,
  type ReviewItemDto,
  toReviewItemResponse,
} from './dto/review.dto.js';

const LIST_PAGE = { limit: 50, max: 100 };

const STATUS_OF: Record<ReviewDecision, Exclude<ReviewStatus, 'pending'>> = {
  approve: 'approved',
  reject: 'rejected',
  escalate: 'escalated',
};

const isPrivileged = (actor: Actor) => actor.role === 'owner' || actor.role === 'admin';

/**
 * The human review queue. A decision, its trace's new status, the approval pattern's observation, the
 * audit entry and the domain event commit in one transaction; of concurrent decisions on one item exactly one wins.
 * See docs/dashboard-developers.md, "Review, approval patterns, webhooks and the event stream";
 * test/review-queue.e2e-spec.ts.
 */
@Injectable()
export class ReviewQueueService {
  constructor(
    private readonly items: ReviewItemsRepository,
    private readonly verdicts: VerdictRollups,
    private readonly traces: TracesRepository,
    private readonly patterns: ApprovalPatternsService,
    private readonly members: MembersRepository,
    private readonly audit: AuditLog,
    private readonly events: DomainEvents,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly masking: PiiMasking,
  ) {}

  async list(actor: Actor, query: ListReviewQueueQueryDto): Promise<Page<ReviewItemDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const assignedTo =
      query.assignedTo === undefined
        ? undefined
        : query.assignedTo === 'none'
          ? null
          : query.assignedTo === 'me'
            ? (actor.userId ?? null)
            : query.assignedTo;
    const { rows, total } = await this.items.list(
      actor.organizationId,
      {
        status: query.status ?? 'pending',
        agentId: query.agentId,
        assignedTo,
        agentScope: agentScopeOf(actor),
      },
      page,
    );
    const excerpts = await this.traces.reviewExcerpts(
      actor.organizationId,
      rows.map((row) => row.traceId),
    );
    return toPage(
      rows.map((row) => toReviewItemResponse(row, excerpts.get(row.traceId))),
      total,
      page,
    );
  }

  /** Decides one item; its effects commit together (see the class). */
  async decide(actor: Actor, id: string, dto: ReviewDecisionDto, meta: RequestMeta): Promise<ReviewItemDto> {
    if (!isObjectId(id)) throw AppError.notFound('Review item');
    const { row, excerpt } = await this.tx.run(() => this.decideInTransaction(actor, id, dto, meta));
    return toReviewItemResponse(row, excerpt);
  }

  /** Decides each item on its own (its own transaction): one item's refusal does not stop the others. */
  async bulkDecide(
    actor: Actor,
    dto: BulkReviewDecisionDto,
    meta: RequestMeta,
  ): Promise<BulkDecisionResultDto> {
    const result: BulkDecisionResultDto = { processed: [], failed: [] };
    for (const id of [...new Set(dto.ids)]) {
      try {
        await this.decide(actor, id, { decision: dto.decision, notes: dto.notes }, meta);
        result.processed.push(id);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        result.failed.push({ id, code: err.code, error: err.message });
      }
    }
    return result;
  }

  async assign(
    actor: Actor,
    id: string,
    dto: AssignReviewItemDto,
    meta: RequestMeta,
  ): Promise<ReviewItemDto> {
    if (!isObjectId(id)) throw AppError.notFound('Review item');
    if (dto.assignedTo !== null) {
      const member = await this.members.findMember(actor.organizationId, dto.assignedTo);
      if (!member?.isActive) {
        const message = 'assignedTo must be an active member of the organization';
        throw AppError.validation(message, [{ field: 'assignedTo', message }]);
      }
    }
    const row = await this.tx.run(async () => {
      const before = await this.items.find(actor.organizationId, id);
      if (!before) throw AppError.notFound('Review item');
      const updated = (await this.items.assign(actor.organizationId, id, dto.assignedTo, this.clock.now()))!;
      if (before.assignedTo !== updated.assignedTo) {
        await this.audit.record(
          actor,
          'review.assigned',
          { type: 'review_item', id },
          { traceId: updated.traceId, from: before.assignedTo, to: updated.assignedTo },
          meta,
        );
      }
      return updated;
    });
    const excerpts = await this.traces.reviewExcerpts(actor.organizationId, [row.traceId]);
    return toReviewItemResponse(row, excerpts.get(row.traceId));
  }

  private async decideInTransaction(
    actor: Actor,
    id: string,
    dto: ReviewDecisionDto,
    meta: RequestMeta,
  ): Promise<{ row: ReviewItemRow; excerpt: TraceExcerpt | undefined }> {
    const organizationId = actor.organizationId;
    const status = STATUS_OF[dto.decision];
    // Escalated items are decided by owners and admins only; an escalated item is not escalated again.
    const from: ReviewStatus[] =
      dto.decision !== 'escalate' && isPrivileged(actor) ? ['pending', 'escalated'] : ['pending'];
    const now = this.clock.now();
    const row = await this.items.decide(organizationId, id, from, {
      status,
      decision: dto.decision,
      // Notes may quote the trace: masked as its content is, when the organization masks.
      notes: await this.masking.maskedText(organizationId, dto.notes || null),
      decidedBy: actor.userId ?? null,
      decidedAt: now,
    });
    if (!row) throw await this.refusal(organizationId, id, dto.decision);
    // Notes may quote the trace; once its subject's content was erased, nothing may add to it again. The item is
    // locked by the decision, then the trace (the order CPI verdicts lock them in too); the transaction rolls back.
    if (row.notes && (await this.traces.isErasedLocked(organizationId, row.traceId))) {
      throw AppError.conflict(
        'The trace’s content was erased at its subject’s request: decide without notes',
        TraceErrorCode.TRACE_ERASED,
      );
    }
    // The item was undecided: the trace's verdict so far, if any, was feedback's, and now moves to today.
    if (dto.decision !== 'escalate') {
      await this.verdicts.changing(organizationId, [row.traceId], { ignoreReview: true });
    }

    const excerpt = (await this.traces.reviewExcerpts(organizationId, [row.traceId])).get(row.traceId);
    const traceStatus =
      dto.decision === 'approve' ? 'approved' : dto.decision === 'reject' ? 'blocked' : 'flagged';
    if (dto.decision !== 'escalate') {
      await this.traces.setReviewedStatus(
        organizationId,
        row.traceId,
        traceStatus as 'approved' | 'blocked',
        now,
      );
      await this.patterns.observe(
        actor,
        signatureOf(
          row.agentId,
          excerpt?.action,
          row.matchedPolicies.map((p) => p.policyId),
        ),
        dto.decision === 'approve',
        meta,
      );
    }
    const details = {
      reviewItemId: row.id,
      traceId: row.traceId,
      agentId: row.agentId,
      decision: dto.decision,
      status,
      traceStatus,
      notes: row.notes,
      decidedBy: row.decidedBy,
      decidedAt: now.toISOString(),
      // As the item shows it: a reviewer closed it (feedback on the trace may close it too, see CpiIngestService).
      resolution: dto.decision === 'escalate' ? null : 'review',
    };
    await this.audit.record(
      actor,
      `review.${status}`,
      { type: 'review_item', id: row.id },
      auditDetailsOf(details),
      meta,
    );
    await this.events.publish([
      {
        organizationId,
        type: dto.decision === 'escalate' ? 'review.escalated' : 'review.completed',
        agentId: row.agentId,
        data: details,
      },
    ]);
    return { row, excerpt };
  }

  /** Why a decision found its item in no state it may start from. */
  private async refusal(organizationId: string, id: string, decision: ReviewDecision): Promise<AppError> {
    const existing = await this.items.find(organizationId, id);
    if (!existing) return AppError.notFound('Review item');
    if (existing.status === 'approved' || existing.status === 'rejected') {
      return AppError.conflict(
        `The review item was ${existing.status} already`,
        ReviewErrorCode.ALREADY_DECIDED,
      );
    }
    if (decision === 'escalate') {
      return AppError.conflict('The review item is escalated already', ReviewErrorCode.ALREADY_ESCALATED);
    }
    return AppError.forbidden('Only an owner or admin may decide an escalated review item');
  }
}
