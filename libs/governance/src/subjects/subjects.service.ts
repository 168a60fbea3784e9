import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  newId,
  Outbox,
  type Page,
  type PaginationQueryDto,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import { type TraceDto, toTraceResponse } from '../traces/dto/trace.dto.js';
import { TracesRepository } from '../traces/traces.repository.js';
import {
  type SubjectErasureDto,
  type SubjectErasureStartedDto,
  type SubjectHoldDto,
  toErasureResponse,
  toHoldResponse,
} from './dto/subject.dto.js';
import { SUBJECT_REF_MAX, SubjectKeys } from './subject-key.js';
import { SubjectErrorCode } from './subjects.errors.js';
import { SubjectsRepository } from './subjects.repository.js';

/** What the audit log names a subject by: its hash, never the reference. */
const subjectTarget = (subjectHash: string) => ({ type: 'subject', id: subjectHash });

/**
 * The rights of the people decisions are about (docs/data-protection.md): their decisions (article 15), the erasure
 * of their content (article 17, run by SubjectErasureWorker) and legal holds. A subject is named by the client's own
 * reference (`subjectRef` at ingestion), which is hashed with the organization's subject key at once: the service
 * never stores nor logs it.
 */
@Injectable()
export class SubjectsService {
  constructor(
    private readonly repo: SubjectsRepository,
    private readonly traces: TracesRepository,
    private readonly keys: SubjectKeys,
    private readonly outbox: Outbox,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /** The reference's hash under the caller's organization key; 400 for a reference no trace could carry. */
  hashOf(actor: Actor, ref: string): string {
    if (ref.length === 0 || ref.length > SUBJECT_REF_MAX) {
      const message = `ref must be 1 to ${SUBJECT_REF_MAX} characters`;
      throw AppError.validation(message, [{ field: 'ref', message }]);
    }
    return this.keys.hashOf(actor.organizationId, ref);
  }

  /** GET /subjects/:ref/decisions: every agent's traces about the subject, newest first; audited. */
  async decisions(
    actor: Actor,
    ref: string,
    query: PaginationQueryDto,
    meta: RequestMeta,
  ): Promise<Page<TraceDto>> {
    const subjectHash = this.hashOf(actor, ref);
    const page = pageRequest(query, { limit: 20, max: 100 });
    const { rows, total } = await this.traces.listBySubject(actor.organizationId, subjectHash, page);
    await this.audit.record(
      actor,
      'subject.accessed',
      subjectTarget(subjectHash),
      { what: 'decisions', decisions: total, page: page.page },
      meta,
    );
    return toPage(rows.map(toTraceResponse), total, page);
  }

  /**
   * POST /subjects/:ref/erasure: starts an erasure (202), or answers the one still running. Refused while the
   * subject is on hold. Repeating it once done starts another, which erases what arrived since (or nothing).
   */
  async requestErasure(actor: Actor, ref: string, meta: RequestMeta): Promise<SubjectErasureStartedDto> {
    const subjectHash = this.hashOf(actor, ref);
    const organizationId = actor.organizationId;
    return this.tx.run(async () => {
      await this.repo.lockSubject(organizationId, subjectHash);
      if (await this.repo.hold(organizationId, subjectHash)) {
        throw AppError.conflict(
          'The subject is on legal hold; lift the hold before erasing',
          SubjectErrorCode.SUBJECT_ON_HOLD,
        );
      }
      const latest = await this.repo.latestErasure(organizationId, subjectHash);
      if (latest?.status === 'running') return { jobId: latest.id, status: latest.status };
      const now = this.clock.now();
      const id = newId(now.getTime());
      await this.repo.insertErasure({
        id,
        organizationId,
        subjectHash,
        status: 'running',
        tracesErased: 0,
        eventsChanged: 0,
        stoppedByHold: false,
        requestedBy: actor.userId,
        startedAt: now,
        finishedAt: null,
      });
      await this.outbox.enqueue('subject.erase', { organizationId, payload: { erasureId: id } });
      await this.audit.record(
        actor,
        'subject.erasure_requested',
        subjectTarget(subjectHash),
        { erasureId: id },
        meta,
      );
      return { jobId: id, status: 'running' as const };
    });
  }

  /** GET /subjects/:ref/erasure: the subject's latest erasure; 404 when none was asked for. */
  async erasure(actor: Actor, ref: string): Promise<SubjectErasureDto> {
    const row = await this.repo.latestErasure(actor.organizationId, this.hashOf(actor, ref));
    if (!row) throw AppError.notFound('Erasure');
    return toErasureResponse(row);
  }

  /** POST /subjects/:ref/hold: places a legal hold (idempotent; audited when placed). */
  async hold(actor: Actor, ref: string, meta: RequestMeta): Promise<SubjectHoldDto> {
    const subjectHash = this.hashOf(actor, ref);
    const organizationId = actor.organizationId;
    return this.tx.run(async () => {
      await this.repo.lockSubject(organizationId, subjectHash);
      const placed = await this.repo.insertHold({
        organizationId,
        subjectHash,
        createdBy: actor.userId,
        createdAt: this.clock.now(),
      });
      if (placed) await this.audit.record(actor, 'subject.hold_placed', subjectTarget(subjectHash), {}, meta);
      return toHoldResponse((await this.repo.hold(organizationId, subjectHash))!);
    });
  }

  /** DELETE /subjects/:ref/hold: lifts the hold; 404 when there is none. */
  async release(actor: Actor, ref: string, meta: RequestMeta): Promise<SubjectHoldDto> {
    const subjectHash = this.hashOf(actor, ref);
    const organizationId = actor.organizationId;
    await this.tx.run(async () => {
      await this.repo.lockSubject(organizationId, subjectHash);
      if (!(await this.repo.deleteHold(organizationId, subjectHash))) throw AppError.notFound('Hold');
      await this.audit.record(actor, 'subject.hold_lifted', subjectTarget(subjectHash), {}, meta);
    });
    return { held: false, since: null };
  }
}
