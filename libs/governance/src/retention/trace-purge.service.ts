import { Injectable, Logger } from '@nestjs/common';
import {
  type Actor,
  AppError,
  type AuditSubject,
  AuditLog,
  isObjectId,
  type RequestMeta,
  TransactionHost,
} from '#platform';
import { TraceFeedbackRepository } from '../cpi/trace-feedback.repository.js';
import { VerdictRollups } from '../cpi/verdict-rollups.js';
import { ReviewItemsRepository } from '../review/review-items.repository.js';
import { SubjectsRepository } from '../subjects/subjects.repository.js';
import { TraceRollups } from '../traces/trace-rollups.js';
import { type PurgeFilter, TracesRepository } from '../traces/traces.repository.js';
import type { PurgeResultDto, PurgeTracesDto } from './dto/purge.dto.js';

/** Traces deleted per transaction: short enough that ingestion waits on no lock for long. */
export const PURGE_BATCH = 1000;

/**
 * Deletes traces: with their review items, feedback and idempotency keys, a batch per transaction,
 * the rollups of the days touched forgotten and their verdicts taken out of the verdict rollups in the same
 * transaction. Audit entries are never deleted: the chain
 * still verifies, and one entry `traces.purged` records the filter and the count.
 * See docs/compliance-officers.md, "Trace purge and retention"; test/trace-purge.e2e-spec.ts.
 */
@Injectable()
export class TracePurgeService {
  private readonly logger = new Logger('TracePurge');

  constructor(
    private readonly traces: TracesRepository,
    private readonly reviews: ReviewItemsRepository,
    private readonly feedback: TraceFeedbackRepository,
    private readonly rollups: TraceRollups,
    private readonly verdicts: VerdictRollups,
    private readonly subjects: SubjectsRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
  ) {}

  /** POST /traces/purge. */
  async purgeFor(actor: Actor, dto: PurgeTracesDto, meta: RequestMeta): Promise<PurgeResultDto> {
    if (dto.agentId !== undefined && !isObjectId(dto.agentId)) {
      throw AppError.validation('agentId is not an agent id', [
        { field: 'agentId', message: 'not an agent id' },
      ]);
    }
    const filter: PurgeFilter = {
      before: new Date(dto.before),
      agentId: dto.agentId,
      status: dto.status,
      heldSubjects: this.subjects.heldQuery(actor.organizationId),
    };
    const matched = await this.traces.countForPurge(actor.organizationId, filter);
    if (dto.dryRun) return { matched, purged: 0 };
    const purged = await this.purge(actor, filter, { trigger: 'request' }, meta);
    return { matched, purged };
  }

  /** Deletes the filter's traces batch by batch; writes `traces.purged` when any was deleted or a caller asked. */
  async purge(
    subject: AuditSubject,
    filter: PurgeFilter,
    details: Record<string, unknown>,
    meta?: RequestMeta,
  ): Promise<number> {
    const organizationId = subject.organizationId;
    // A subject on legal hold keeps its traces, whatever the filter (POST /subjects/:ref/hold).
    filter = { ...filter, heldSubjects: this.subjects.heldQuery(organizationId) };
    let purged = 0;
    for (;;) {
      const deleted = await this.tx.run(async () => {
        const rows = await this.traces.deleteBatch(organizationId, filter, PURGE_BATCH);
        if (rows.length === 0) return 0;
        const ids = rows.map((r) => r.id);
        await this.verdicts.changing(organizationId, ids);
        await this.reviews.deleteForTraces(organizationId, ids);
        await this.feedback.deleteForTraces(organizationId, ids);
        const times = rows.map((r) => r.createdAt.getTime());
        await this.rollups.forgetDays(
          organizationId,
          new Date(Math.min(...times)),
          new Date(Math.max(...times)),
        );
        return rows.length;
      });
      purged += deleted;
      if (deleted < PURGE_BATCH) break;
    }
    if (purged > 0 || details.trigger === 'request') {
      await this.audit.record(
        subject,
        'traces.purged',
        { type: 'organization', id: organizationId },
        {
          before: filter.before.toISOString(),
          agentId: filter.agentId ?? null,
          status: filter.status ?? null,
          purged,
          ...details,
        },
        meta,
      );
      this.logger.log({ organizationId, purged }, 'Traces purged');
    }
    return purged;
  }
}
