import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AuditLog, Clock, DomainEvents, Outbox, type OutboxDelivery, TransactionHost } from '#platform';
import { TraceFeedbackRepository } from '../cpi/trace-feedback.repository.js';
import { ReviewItemsRepository } from '../review/review-items.repository.js';
import { type SubjectErasureCursor, TracesRepository } from '../traces/traces.repository.js';
import { WebhooksRepository } from '../webhooks/webhooks.repository.js';
import { SubjectsRepository } from './subjects.repository.js';

/** Traces erased per transaction: each batch holds its traces' row locks briefly. */
export const ERASURE_BATCH = 1000;

/** Members of stored events that may quote a trace's content: the notes of review outcomes and CPI verdicts. */
export const EVENT_MEMBERS_ERASED = ['notes'] as const;

/**
 * Runs a subject's erasure, a message of the outbox topic `subject.erase`: batch after batch, each one transaction
 * under the subject's lock, until no trace of the subject is left with content. A batch erases the traces' content
 * (and similarity text and salt), their review items' notes, their CPI verdicts' notes, the notes in
 * the stored events about them (the stream's replay, webhook redeliveries) and the receivers' answers to those
 * events' deliveries. Every batch commits on its own, so a crash resumes where it stopped (the outbox retries the
 * message, and erasing is idempotent). A legal hold placed meanwhile stops it at the next batch.
 * See docs/data-protection.md, "Erasure (article 17)"; test/subject-erasure.e2e-spec.ts.
 */
@Injectable()
export class SubjectErasureWorker implements OnModuleInit {
  private readonly logger = new Logger('SubjectErasure');

  constructor(
    private readonly outbox: Outbox,
    private readonly repo: SubjectsRepository,
    private readonly traces: TracesRepository,
    private readonly reviews: ReviewItemsRepository,
    private readonly feedback: TraceFeedbackRepository,
    private readonly webhooks: WebhooksRepository,
    private readonly events: DomainEvents,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.outbox.handle('subject.erase', {
      deliver: (message) => this.run(message),
      backoffMs: [5_000, 30_000, 120_000],
      leaseMs: 10 * 60_000,
    });
  }

  private async run(message: OutboxDelivery<'subject.erase'>): Promise<void> {
    const organizationId = message.organizationId;
    if (!organizationId) return;
    const job = await this.repo.erasure(organizationId, message.payload.erasureId);
    if (!job || job.status !== 'running') return;
    let after: SubjectErasureCursor | undefined;
    for (;;) {
      const step = await this.tx.run(async () => {
        await this.repo.lockSubject(organizationId, job.subjectHash);
        if (await this.repo.hold(organizationId, job.subjectHash)) return 'held' as const;
        const erased = await this.traces.eraseSubjectBatch(
          organizationId,
          job.subjectHash,
          ERASURE_BATCH,
          this.clock.now(),
          after,
        );
        if (erased.length === 0) return 0;
        // Only a reviewed trace has notes on an item, and stored events about it (review outcomes).
        const reviewed = erased.filter((t) => t.reviewItemId !== null);
        await this.reviews.eraseNotes(
          organizationId,
          reviewed.map((t) => t.reviewItemId!),
        );
        await this.feedback.eraseForTraces(
          organizationId,
          erased.map((t) => t.id),
        );
        const eventIds = await this.events.stripForTraces(
          organizationId,
          reviewed.map((t) => t.id),
          EVENT_MEMBERS_ERASED,
        );
        await this.webhooks.clearResponsesForEvents(organizationId, eventIds);
        await this.repo.addErased(organizationId, job.id, erased.length, eventIds.length);
        after = erased.at(-1);
        return erased.length;
      });
      if (step === 'held' || step < ERASURE_BATCH) {
        await this.finish(organizationId, job.id, step === 'held');
        return;
      }
    }
  }

  /** Marks the job done and writes `subject.erased` with its counts, once. */
  private async finish(organizationId: string, id: string, stoppedByHold: boolean): Promise<void> {
    await this.tx.run(async () => {
      const done = await this.repo.finishErasure(organizationId, id, this.clock.now(), stoppedByHold);
      if (!done) return;
      await this.audit.record(
        { organizationId, actor: { type: 'system', id: null, email: null } },
        'subject.erased',
        { type: 'subject', id: done.subjectHash },
        {
          erasureId: done.id,
          tracesErased: done.tracesErased,
          eventsChanged: done.eventsChanged,
          stoppedByHold,
          requestedBy: done.requestedBy,
        },
      );
      this.logger.log({ organizationId, erasureId: id, traces: done.tracesErased }, 'Subject erased');
    });
  }
}
