import { type BeforeApplicationShutdown, Inject, Injectable, Optional } from '@nestjs/common';
import { AppError, Clock, ErrorCode, TransactionHost } from '../../../platform/src/index.js';
import { type AuditInput, AuditService } from '../audit/audit.service.js';
import type { ReviewItemRow } from '../review/review-item.schema.js';
import type { TraceRow } from './trace.schema.js';
import { TracesRepository } from './traces.repository.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** One ingested trace, ready to store: what POST /traces and OTLP decided before touching the database. */
export interface TraceWrite {
  trace: TraceRow;
  /** The pending review item of a flagged trace. */
  reviewItem: ReviewItemRow | null;
  audit: Omit<AuditInput, 'organizationId'>;
  idempotencyKey?: string;
  /** The API key that sent the trace: the write is refused if it was revoked before the write commits. */
  keyId?: string | null;
}

export type IngestOutcome = { kind: 'stored'; trace: TraceRow } | { kind: 'duplicate'; id: string };

export interface TraceWriterOptions {
  /** Traces written by one transaction at most. */
  maxBatch: number;
  /** Traces waiting in this process at most; past it, ingestion answers 503 with Retry-After. */
  maxPending: number;
}

export const TRACE_WRITER_OPTIONS = Symbol('TRACE_WRITER_OPTIONS');
export const TRACE_WRITER_DEFAULTS: TraceWriterOptions = { maxBatch: 100, maxPending: 10_000 };

interface Pending {
  write: TraceWrite;
  resolve: (outcome: IngestOutcome) => void;
  reject: (err: unknown) => void;
}

/** 400 naming agentId: the agent is not (or no longer) one of the organization's. */
export const unknownAgentError = () =>
  AppError.validation('agentId does not name an agent of this organization', [
    { field: 'agentId', message: 'agentId does not name an agent of this organization' },
  ]);

/**
 * Group commit of trace ingestion. Every trace is stored with its audit entry (and its review item) in one
 * transaction, under the organization's chain lock; one transaction per trace would hold that lock for a
 * commit each and cap an organization at one trace per commit latency. Instead, traces of one organization
 * queue while its previous transaction commits, and the next transaction writes all of them: one lock, one
 * chain-head read, one multi-row insert per table, one commit. Batches of different organizations run in
 * parallel (up to the pool size). A request is answered only after its own transaction has committed.
 *
 * Under the chain lock, each batch re-checks that its agents still exist and its API keys are still live (an
 * agent's deletion and a key's regeneration append to the same chain, so neither can interleave), and claims
 * its idempotency keys. A batch that fails as a whole is retried trace by trace, so that one bad trace fails
 * alone.
 */
@Injectable()
export class TraceWriter implements BeforeApplicationShutdown {
  private readonly options: TraceWriterOptions;
  /** Traces waiting per organization, in arrival order. */
  private readonly queues = new Map<string, Pending[]>();
  /** Organizations whose queue is being written; each has one loop in `drain`. */
  private readonly draining = new Map<string, Promise<void>>();
  private pending = 0;

  constructor(
    private readonly repo: TracesRepository,
    private readonly audit: AuditService,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Optional() @Inject(TRACE_WRITER_OPTIONS) options?: Partial<TraceWriterOptions>,
  ) {
    this.options = { ...TRACE_WRITER_DEFAULTS, ...options };
  }

  /** Stores the trace; resolves once it has committed (or is found to repeat an idempotency key). */
  write(organizationId: string, write: TraceWrite): Promise<IngestOutcome> {
    if (this.pending >= this.options.maxPending) {
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, 'Ingestion is saturated; retry shortly', {
        headers: { 'Retry-After': '1' },
      });
    }
    return new Promise<IngestOutcome>((resolve, reject) => {
      this.pending += 1;
      let queue = this.queues.get(organizationId);
      if (!queue) this.queues.set(organizationId, (queue = []));
      queue.push({ write, resolve, reject });
      if (!this.draining.has(organizationId)) {
        const loop = this.drain(organizationId).finally(() => this.draining.delete(organizationId));
        this.draining.set(organizationId, loop);
      }
    });
  }

  /** Shutdown waits for every accepted trace to be written before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    while (this.draining.size > 0) await Promise.allSettled([...this.draining.values()]);
  }

  /** Traces accepted and not yet answered (for diagnostics and tests). */
  get inFlight(): number {
    return this.pending;
  }

  private async drain(organizationId: string): Promise<void> {
    for (;;) {
      const queue = this.queues.get(organizationId);
      if (!queue || queue.length === 0) {
        this.queues.delete(organizationId);
        return;
      }
      await this.commit(organizationId, this.takeBatch(queue));
    }
  }

  /**
   * The next batch, in arrival order. A trace repeating an idempotency key already in the batch waits for the
   * next one, where it meets the first trace's committed claim.
   */
  private takeBatch(queue: Pending[]): Pending[] {
    const batch: Pending[] = [];
    const deferred: Pending[] = [];
    const keys = new Set<string>();
    let taken = 0;
    while (taken < queue.length && batch.length < this.options.maxBatch) {
      const item = queue[taken++]!;
      const key = item.write.idempotencyKey;
      if (key !== undefined && keys.has(key)) {
        deferred.push(item);
        continue;
      }
      if (key !== undefined) keys.add(key);
      batch.push(item);
    }
    queue.splice(0, taken, ...deferred);
    return batch;
  }

  private async commit(organizationId: string, batch: Pending[]): Promise<void> {
    let outcomes: (IngestOutcome | AppError)[];
    try {
      outcomes = await this.tx.runDetached(() =>
        this.writeBatch(
          organizationId,
          batch.map((p) => p.write),
        ),
      );
    } catch (err) {
      if (batch.length > 1) {
        // Isolate what failed: nothing of the batch committed, so each trace is simply tried on its own.
        for (const item of batch) await this.commit(organizationId, [item]);
        return;
      }
      batch[0]!.reject(err);
      this.pending -= 1;
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome instanceof AppError) item.reject(outcome);
      else item.resolve(outcome);
    });
    this.pending -= batch.length;
  }

  /** One transaction: re-check subjects, claim idempotency keys, insert traces, review items, audit entries. */
  private async writeBatch(
    organizationId: string,
    writes: TraceWrite[],
  ): Promise<(IngestOutcome | AppError)[]> {
    await this.audit.lockChain(organizationId);
    const live = await this.repo.liveAgentsAndKeys(
      organizationId,
      [...new Set(writes.map((w) => w.trace.agentId))],
      [...new Set(writes.flatMap((w) => (w.keyId ? [w.keyId] : [])))],
    );
    const outcomes: (IngestOutcome | AppError | undefined)[] = writes.map((w) =>
      w.keyId && !live.keyIds.has(w.keyId)
        ? AppError.unauthorized('Invalid API key')
        : live.agentIds.has(w.trace.agentId)
          ? undefined
          : unknownAgentError(),
    );

    const claims = writes.flatMap((w, i) =>
      outcomes[i] === undefined && w.idempotencyKey !== undefined
        ? [{ index: i, key: w.idempotencyKey, traceId: w.trace.id }]
        : [],
    );
    if (claims.length > 0) {
      const now = this.clock.now();
      const claimed = await this.repo.claimIdempotencyKeys(
        organizationId,
        claims,
        now,
        new Date(now.getTime() - IDEMPOTENCY_TTL_MS),
      );
      const taken = claims.filter((c) => !claimed.has(c.key));
      const holders = await this.repo.tracesOfIdempotencyKeys(
        organizationId,
        taken.map((c) => c.key),
      );
      for (const claim of taken) {
        const id = holders.get(claim.key);
        // Without a holder the row was purged between the two statements; the client may simply retry.
        outcomes[claim.index] = id
          ? { kind: 'duplicate', id }
          : AppError.conflict(
              'The idempotency key is being reused concurrently; retry',
              'SVC_DUPLICATE_REQUEST',
            );
      }
    }

    const stored = writes.filter((_, i) => outcomes[i] === undefined);
    await this.repo.insertTraces(stored.map((w) => w.trace));
    await this.repo.insertReviewItems(stored.flatMap((w) => (w.reviewItem ? [w.reviewItem] : [])));
    await this.audit.appendMany(
      organizationId,
      stored.map((w) => w.audit),
    );
    return outcomes.map((o, i) => o ?? { kind: 'stored', trace: writes[i]!.trace });
  }
}
