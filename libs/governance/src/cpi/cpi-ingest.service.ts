import { Injectable, Logger } from '@nestjs/common';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  DomainEvents,
  isObjectId,
  type NewDomainEvent,
  type RequestMeta,
  TransactionHost,
} from '#platform';
import { auditDetailsOf } from '../review/review-audit.js';
import type { ReviewItemRow } from '../review/review-item.schema.js';
import { ReviewItemsRepository } from '../review/review-items.repository.js';
import type { TraceRow } from '../traces/trace.schema.js';
import { contentHashOf } from '../traces/trace-content.js';
import { TraceErrorCode } from '../traces/traces.errors.js';
import { SEARCH_TEXT_MAX } from '../traces/trace-ingest.pipeline.js';
import { PiiMasking } from '../traces/pii-masking.js';
import { TracesRepository } from '../traces/traces.repository.js';
import type { FeedbackAction } from './cpi.schema.js';
import type { CpiIngestDto, CpiIngestResultDto } from './dto/cpi-ingest.dto.js';
import { TraceFeedbackRepository } from './trace-feedback.repository.js';
import { VerdictRollups } from './verdict-rollups.js';

/** Prefixed once to the rationale of a corrected trace, so readers see that a human replaced the agent's decision. */
export const CORRECTION_MARKER = '[Human correction] ';

/**
 * A trace's current decision: outputDecision.decision once a human set it, else the agent's own action (ingestion
 * has no separate decision field, so the action is what a human approves or corrects).
 */
export function decisionOf(output: Record<string, unknown>): unknown {
  return output.decision ?? output.action ?? null;
}

interface Verdict {
  action: FeedbackAction;
  decision: string | null;
  confidence: number | null;
}

/**
 * Reads action and correctedDecision into one verdict, or refuses with 400 VALIDATION_ERROR
 * (test/cpi-ingest.e2e-spec.ts).
 */
export function verdictOf(dto: CpiIngestDto): Verdict {
  const raw = dto.correctedDecision;
  if (dto.action === 'approve') {
    if (raw !== undefined) throw AppError.validation('correctedDecision is not allowed with action approve');
    return { action: 'approve', decision: null, confidence: null };
  }
  if (raw === undefined) {
    throw AppError.validation(
      dto.action === 'correct'
        ? 'correctedDecision is required with action correct'
        : 'action or correctedDecision is required',
    );
  }
  const validDecision = (value: unknown): value is string =>
    typeof value === 'string' && value.trim().length >= 1 && value.length <= 200;
  if (typeof raw === 'string') {
    if (!validDecision(raw)) throw AppError.validation('correctedDecision must be 1–200 characters');
    return { action: 'correct', decision: raw, confidence: null };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw AppError.validation('correctedDecision must be a string or an object {decision, confidence?}');
  }
  const { decision, confidence, ...rest } = raw as Record<string, unknown>;
  if (Object.keys(rest).length > 0) {
    throw AppError.validation(`correctedDecision has unknown fields: ${Object.keys(rest).join(', ')}`);
  }
  if (!validDecision(decision))
    throw AppError.validation('correctedDecision.decision must be 1–200 characters');
  if (
    confidence !== undefined &&
    (typeof confidence !== 'number' || !Number.isFinite(confidence) || confidence < 0 || confidence > 1)
  ) {
    throw AppError.validation('correctedDecision.confidence must be a number from 0 to 1');
  }
  return { action: 'correct', decision, confidence: (confidence as number | undefined) ?? null };
}

/**
 * The audit metadata and event data of an item closed by feedback: the fields of a reviewer's decision (see
 * ReviewQueueService), with `resolution: 'feedback'` and who gave the feedback in place of a reviewer.
 */
export function closureDetails(
  item: ReviewItemRow,
  trace: TraceRow,
  actor: Actor,
  action: FeedbackAction,
  userEmail: string | null,
  feedbackAuditEntryId: string,
): Record<string, unknown> {
  return {
    reviewItemId: item.id,
    traceId: item.traceId,
    agentId: item.agentId,
    decision: item.status === 'approved' ? 'approve' : 'reject',
    status: item.status,
    traceStatus: trace.status,
    notes: item.notes,
    decidedBy: null,
    decidedAt: item.decidedAt!.toISOString(),
    resolution: 'feedback',
    feedback: { action, apiKeyId: actor.keyId ?? null, userEmail, auditEntryId: feedbackAuditEntryId },
  };
}

/**
 * POST /cpi/ingest: the trace, its feedback row, the rollups, the audit entry and the
 * domain event change in one transaction; the similarity text is re-indexed after commit. A verdict on a trace whose
 * review item is still undecided closes the item in the same transaction (approve → approved, correct → rejected,
 * as the CPI reads count them), audited and announced as a review completed by feedback, so that no reviewer
 * decides it afterwards and moves the trace again.
 * See docs/compliance-officers.md, "Human feedback and the compliance-performance indicators (CPI)";
 * test/cpi-ingest.e2e-spec.ts and test/feedback-closes-review.e2e-spec.ts.
 */
@Injectable()
export class CpiIngestService {
  private readonly logger = new Logger(CpiIngestService.name);

  constructor(
    private readonly traces: TracesRepository,
    private readonly feedback: TraceFeedbackRepository,
    private readonly reviewItems: ReviewItemsRepository,
    private readonly verdicts: VerdictRollups,
    private readonly audit: AuditLog,
    private readonly events: DomainEvents,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly masking: PiiMasking,
  ) {}

  async ingest(actor: Actor, dto: CpiIngestDto, meta: RequestMeta): Promise<CpiIngestResultDto> {
    const given = verdictOf(dto);
    if (!isObjectId(dto.traceId)) throw AppError.notFound('Trace');
    const organizationId = actor.organizationId;
    const at = this.clock.now();
    const userEmail = dto.userEmail ?? null;
    // The notes and the corrected decision enter the trace's content: masked as ingestion masks it.
    const notes = await this.masking.maskedText(organizationId, dto.feedbackNotes ?? null);
    const verdict = { ...given, decision: await this.masking.maskedText(organizationId, given.decision) };
    const after = await this.tx.run(async () => {
      // The item before the trace, in the order a review decision locks them, so that the two cannot deadlock;
      // an unknown trace rolls the closure back with the 404 below.
      const closed = await this.reviewItems.closeByFeedback(organizationId, dto.traceId, {
        status: verdict.action === 'approve' ? 'approved' : 'rejected',
        notes,
        decidedAt: at,
      });
      const changed = await this.traces.applyFeedback(
        organizationId,
        dto.traceId,
        (before) => this.applied(before, verdict, notes, actor, userEmail, at),
        at,
      );
      if (!changed) throw AppError.notFound('Trace');
      const { before, after } = changed;
      // The trace is locked: its verdict so far leaves its day (an item closed just now had none).
      await this.verdicts.changing(organizationId, [before.id], { ignoreReview: closed !== undefined });
      // `applied` refused an erased trace, so its content is there.
      const output = before.outputDecision!;
      const previousDecision = decisionOf(output);
      const originalDecision = output.originalDecision ?? previousDecision;
      await this.feedback.upsert(organizationId, {
        organizationId,
        traceId: before.id,
        agentId: before.agentId,
        action: verdict.action,
        statusBefore: before.status,
        originalDecision,
        correctedDecision: verdict.decision,
        originalConfidence: before.confidence,
        correctedConfidence: verdict.confidence,
        notes,
        userEmail,
        traceCreatedAt: before.createdAt,
        at,
      });
      const type = verdict.action === 'approve' ? 'cpi.approved' : 'cpi.corrected';
      const entry = await this.audit.record(
        actor,
        type,
        { type: 'trace', id: before.id },
        {
          action: verdict.action,
          userEmail,
          // The content the verdict left (its rationale among it) is the trace's; the entry holds its hash, which
          // GET /traces/:id/verify checks from now on, and not the text, which erasure must be able to remove.
          ...(after.contentSalt ? { contentHash: contentHashOf(after.contentSalt, after) } : {}),
          previousDecision,
          correctedDecision: verdict.decision,
          correctedConfidence: verdict.confidence,
          hasNotes: notes !== null && notes.length > 0,
          closedReviewItemId: closed?.id ?? null,
        },
        meta,
      );
      if (after.contentSalt) await this.traces.setContentEntry(organizationId, after.id, entry.id);
      const events: NewDomainEvent[] = [
        {
          organizationId,
          type,
          agentId: before.agentId,
          data: {
            traceId: before.id,
            agentId: before.agentId,
            action: verdict.action,
            humanOverride: after.humanOverride,
            userEmail,
          },
        },
      ];
      if (closed) {
        const details = closureDetails(closed, after, actor, verdict.action, userEmail, entry.id);
        await this.audit.record(
          actor,
          `review.${closed.status}`,
          { type: 'review_item', id: closed.id },
          auditDetailsOf(details),
          meta,
        );
        events.push({ organizationId, type: 'review.completed', agentId: closed.agentId, data: details });
      }
      await this.events.publish(events);
      return after;
    });
    if (verdict.action === 'correct') this.reindexLater(organizationId, after);
    return {
      traceId: after.id,
      status: 'success',
      humanOverride: after.humanOverride,
      action: verdict.action,
    };
  }

  /** The trace's new fields for the verdict (what approve and correct set: test/cpi-ingest.e2e-spec.ts). */
  private applied(
    before: TraceRow,
    verdict: Verdict,
    notes: string | null,
    actor: Actor,
    userEmail: string | null,
    at: Date,
  ): Pick<TraceRow, 'status' | 'humanOverride' | 'outputDecision' | 'metadata' | 'rationale'> {
    if (before.erasedAt || !before.outputDecision) {
      // A verdict writes into the content (the corrected decision, the notes), which the subject had erased.
      throw AppError.conflict(
        'The trace’s content was erased; a verdict can no longer be recorded on it',
        TraceErrorCode.TRACE_ERASED,
      );
    }
    if (verdict.action === 'approve') {
      return {
        status: 'success',
        humanOverride: false,
        outputDecision: before.outputDecision,
        rationale: before.rationale,
        metadata: {
          ...before.metadata,
          // Without an e-mail the approver is the workspace key that submitted the verdict.
          approvedBy: userEmail ?? `apiKey:${actor.keyId ?? 'unknown'}`,
          approvedAt: at.toISOString(),
        },
      };
    }
    const output: Record<string, unknown> = {
      ...before.outputDecision,
      decision: verdict.decision,
      // Kept from the first correction, so that repeating one never loses the agent's own decision.
      originalDecision:
        'originalDecision' in before.outputDecision
          ? before.outputDecision.originalDecision
          : decisionOf(before.outputDecision),
      correctionNotes: notes,
    };
    if (verdict.confidence !== null) output.correctedConfidence = verdict.confidence;
    else delete output.correctedConfidence;
    const rationale = before.rationale ?? '';
    return {
      status: 'success',
      humanOverride: true,
      outputDecision: output,
      metadata: before.metadata,
      rationale: rationale.startsWith(CORRECTION_MARKER) ? rationale : `${CORRECTION_MARKER}${rationale}`,
    };
  }

  /**
   * Rule 5: the similarity text gains the corrected decision after the response; a failure is logged, never
   * surfaced, as the verdict itself has committed.
   */
  private reindexLater(organizationId: string, trace: TraceRow): void {
    const prompt = typeof trace.inputContext?.prompt === 'string' ? trace.inputContext.prompt : '';
    const text = typeof trace.outputDecision?.text === 'string' ? trace.outputDecision.text : '';
    const decision = String(trace.outputDecision?.decision ?? '');
    const searchText = `${prompt}\n${text}\n${decision}`.slice(0, SEARCH_TEXT_MAX);
    setImmediate(() => {
      this.traces.setSearchText(organizationId, trace.id, searchText).catch((err: unknown) => {
        this.logger.error(`re-indexing trace ${trace.id} failed: ${String(err)}`);
      });
    });
  }
}
