import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  isObjectId,
  type Page,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import { ActivePatterns } from './active-patterns.js';
import type { ApprovalPatternRow, ApprovalPatternStatus } from './approval-pattern.schema.js';
import type { PatternSignature } from './approval-pattern.signature.js';
import { ApprovalPatternErrorCode } from './approval-patterns.errors.js';
import { ApprovalPatternsRepository } from './approval-patterns.repository.js';
import {
  type ApprovalPatternDto,
  type ListApprovalPatternsQueryDto,
  toApprovalPatternResponse,
} from './dto/approval-pattern.dto.js';

const LIST_PAGE = { limit: 50, max: 100 };

const target = (row: ApprovalPatternRow) => ({ type: 'approval_pattern', id: row.id });

/**
 * Approval patterns: observations counted by review decisions, signoff and revocation. Ingestion
 * reads the active ones through `ActivePatterns`.
 * See docs/dashboard-developers.md, "Review, approval patterns, webhooks and the event stream";
 * test/approval-patterns.e2e-spec.ts.
 */
@Injectable()
export class ApprovalPatternsService {
  constructor(
    private readonly repo: ApprovalPatternsRepository,
    private readonly active: ActivePatterns,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /**
   * Counts one review decision (approve or reject) of the signature, in the caller's transaction. When the pattern
   * starts awaiting signoff, `approval_pattern.pending_signoff` is audited with it.
   */
  async observe(
    actor: Actor,
    signature: PatternSignature,
    approved: boolean,
    meta?: RequestMeta,
  ): Promise<void> {
    const { row, previous } = await this.repo.observe(
      actor.organizationId,
      signature,
      approved,
      this.clock.now(),
    );
    if (row.status === 'pending_signoff' && previous !== 'pending_signoff') {
      await this.audit.record(
        actor,
        'approval_pattern.pending_signoff',
        target(row),
        this.countsOf(row),
        meta,
      );
    }
  }

  async list(actor: Actor, query: ListApprovalPatternsQueryDto): Promise<Page<ApprovalPatternDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.list(
      actor.organizationId,
      { status: query.status, agentId: query.agentId },
      page,
    );
    return toPage(rows.map(toApprovalPatternResponse), total, page);
  }

  /** pending_signoff → active: later flagged traces with its signature are approved at ingestion. */
  signoff(actor: Actor, id: string, meta: RequestMeta): Promise<ApprovalPatternDto> {
    return this.move(actor, id, ['pending_signoff'], 'active', 'approval_pattern.signed_off', meta);
  }

  /** active or pending_signoff → observing, its counts started again. */
  revoke(actor: Actor, id: string, meta: RequestMeta): Promise<ApprovalPatternDto> {
    return this.move(actor, id, ['active', 'pending_signoff'], 'observing', 'approval_pattern.revoked', meta);
  }

  private async move(
    actor: Actor,
    id: string,
    from: ApprovalPatternStatus[],
    to: ApprovalPatternStatus,
    eventType: string,
    meta: RequestMeta,
  ): Promise<ApprovalPatternDto> {
    if (!isObjectId(id)) throw AppError.notFound('Approval pattern');
    return this.tx.run(async () => {
      const now = this.clock.now();
      const row = await this.repo.transition(actor.organizationId, id, from, {
        status: to,
        updatedAt: now,
        ...(to === 'active'
          ? { signedOffBy: actor.userId ?? null, signedOffAt: now }
          : { signedOffBy: null, signedOffAt: null, observations: 0, approvals: 0 }),
      });
      if (!row) {
        const existing = await this.repo.find(actor.organizationId, id);
        if (!existing) throw AppError.notFound('Approval pattern');
        throw AppError.conflict(
          `The approval pattern is ${existing.status}; this needs it ${from.join(' or ')}`,
          ApprovalPatternErrorCode.PATTERN_STATE_CONFLICT,
        );
      }
      await this.audit.record(actor, eventType, target(row), { ...this.countsOf(row), status: to }, meta);
      await this.active.announceChange(actor.organizationId);
      return toApprovalPatternResponse(row);
    });
  }

  private countsOf(row: ApprovalPatternRow): Record<string, unknown> {
    return {
      agentId: row.agentId,
      action: row.action,
      policyIds: row.policyIds,
      observations: row.observations,
      approvals: row.approvals,
    };
  }
}
