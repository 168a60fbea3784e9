import { type BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  AppError,
  Clock,
  ErrorCode,
  type SendStatements,
  sendQueries,
  TransactionHost,
} from '../../../platform/src/index.js';
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

interface Pending {
  organizationId: string;
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
 * Whether the database answered with an error for a statement (a SQLSTATE; the query builder wraps driver errors
 * as their cause), as opposed to a connection that failed or timed out.
 */
export function isStatementError(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    const { code, severity } = e as { code?: unknown; severity?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string') return true;
  }
  return false;
}

/** `organizationId:value`; organization ids are hex, so the first colon separates. */
const scoped = (organizationId: string, value: string) => `${organizationId}:${value}`;

/**
 * Group commit of trace ingestion. Every trace is stored with its audit entry (and its review item) in one
 * transaction, under its organization's chain lock; one transaction per trace would hold that lock for a commit
 * each, cap an organization at one trace per commit latency, and pay a handful of statements per trace. Instead,
 * traces queue while the previous transaction commits and the next transaction writes all of them, whatever
 * their organizations: one lock statement (chains locked in sorted order, so writers of several replicas cannot
 * deadlock), one read of the chain heads, one multi-row insert per table, one commit. A request is answered only
 * after its own transaction has committed.
 *
 * Under the chain locks, each batch re-checks that its agents still exist and its API keys are still live (an
 * agent's deletion and a key's regeneration append to the same chain, so neither can interleave), and claims its
 * idempotency keys. A batch that fails as a whole is retried trace by trace, so that one bad trace fails alone.
 */
@Injectable()
export class TraceWriter implements BeforeApplicationShutdown {
  private readonly options: AppConfig['ingest'];
  /** Traces waiting, in arrival order. */
  private queue: Pending[] = [];
  /** The batch being written; `commit` never rejects. */
  private active: Promise<void> | null = null;
  /** Traces of that batch. */
  private writing = 0;

  constructor(
    private readonly repo: TracesRepository,
    private readonly audit: AuditService,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.options = config.ingest;
  }

  /** Stores the trace; resolves once it has committed (or is found to repeat an idempotency key). */
  write(organizationId: string, write: TraceWrite): Promise<IngestOutcome> {
    return this.writeAll(organizationId, [write])[0]!;
  }

  /**
   * Stores the traces of one request (the spans of an OTLP export): all are accepted, or none when they would
   * take the writer past INGEST_MAX_PENDING (503, so that the client's retry cannot store some of them twice).
   * Each resolves on its own once committed.
   */
  writeAll(organizationId: string, writes: TraceWrite[]): Promise<IngestOutcome>[] {
    if (this.inFlight + writes.length > this.options.maxPending) {
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, 'Ingestion is saturated; retry shortly', {
        headers: { 'Retry-After': '1' },
      });
    }
    const outcomes = writes.map(
      (write) =>
        new Promise<IngestOutcome>((resolve, reject) => {
          this.queue.push({ organizationId, write, resolve, reject });
        }),
    );
    this.pump();
    return outcomes;
  }

  /** Shutdown waits for every accepted trace to be written before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    while (this.active) await this.active;
  }

  /** Traces accepted and not yet answered (for diagnostics, back-pressure and tests). */
  get inFlight(): number {
    return this.queue.length + this.writing;
  }

  /**
   * Writes the queue, one batch at a time, until it is empty. One transaction at a time is the fastest: a second
   * one would wait on the chain locks the first holds, and smaller batches cost more statements per trace.
   */
  private pump(): void {
    if (this.active || this.queue.length === 0) return;
    const batch = this.takeBatch();
    this.writing = batch.length;
    this.active = this.commit(batch).finally(() => {
      this.writing = 0;
      this.active = null;
      this.pump();
    });
  }

  /**
   * The next batch, in arrival order. A trace repeating an idempotency key of its organization already in the
   * batch waits for the next one, where it meets the first trace's committed claim.
   */
  private takeBatch(): Pending[] {
    const batch: Pending[] = [];
    const deferred: Pending[] = [];
    const keys = new Set<string>();
    let taken = 0;
    while (taken < this.queue.length && batch.length < this.options.maxBatch) {
      const item = this.queue[taken++]!;
      const key = item.write.idempotencyKey;
      if (key !== undefined) {
        const claim = scoped(item.organizationId, key);
        if (keys.has(claim)) {
          deferred.push(item);
          continue;
        }
        keys.add(claim);
      }
      batch.push(item);
    }
    this.queue = [...deferred, ...this.queue.slice(taken)];
    return batch;
  }

  private async commit(batch: Pending[]): Promise<void> {
    let outcomes: (IngestOutcome | AppError)[];
    try {
      outcomes = await this.tx.pipelined((send) => this.writeBatch(send, batch));
    } catch (err) {
      if (batch.length > 1 && isStatementError(err)) {
        // Isolate what the database refused: nothing of the batch committed, so each trace is tried on its own.
        for (const item of batch) await this.commit([item]);
      } else {
        // Unreachable database (or a single trace): retrying each trace would only multiply the wait.
        for (const item of batch) item.reject(err);
      }
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome instanceof AppError) item.reject(outcome);
      else item.resolve(outcome);
    });
  }

  /**
   * One transaction in two round trips (three with idempotency keys): lock the chains and read their heads with
   * the live agents and keys; claim idempotency keys; insert traces, review items and audit entries, with COMMIT.
   */
  private async writeBatch(send: SendStatements, batch: Pending[]): Promise<(IngestOutcome | AppError)[]> {
    const [chains, live] = await sendQueries(send, [
      this.audit.openChainsQuery([...new Set(batch.map((p) => p.organizationId))]),
      this.repo.livePairsQuery(
        batch.map((p) => ({ organizationId: p.organizationId, id: p.write.trace.agentId })),
        batch.flatMap((p) =>
          p.write.keyId ? [{ organizationId: p.organizationId, id: p.write.keyId }] : [],
        ),
      ),
    ] as const);
    const outcomes: (IngestOutcome | AppError | undefined)[] = batch.map(({ organizationId, write }) =>
      write.keyId && !live.keys.has(scoped(organizationId, write.keyId))
        ? AppError.unauthorized('Invalid API key')
        : live.agents.has(scoped(organizationId, write.trace.agentId))
          ? undefined
          : unknownAgentError(),
    );
    await this.settleIdempotencyKeys(send, batch, outcomes);

    const stored = batch.filter((_, i) => outcomes[i] === undefined);
    const entries = chains.next(stored.map((p) => ({ organizationId: p.organizationId, ...p.write.audit })));
    await sendQueries(
      send,
      [
        this.repo.insertTracesQuery(stored.map((p) => p.write.trace)),
        this.repo.insertReviewItemsQuery(
          stored.flatMap((p) => (p.write.reviewItem ? [p.write.reviewItem] : [])),
        ),
        this.audit.insertQuery(entries),
      ] as const,
      { commit: true },
    );
    return outcomes.map((o, i) => o ?? { kind: 'stored', trace: batch[i]!.write.trace });
  }

  /** Claims the idempotency keys of the traces still to store; a taken key makes its trace a duplicate. */
  private async settleIdempotencyKeys(
    send: SendStatements,
    batch: Pending[],
    outcomes: (IngestOutcome | AppError | undefined)[],
  ): Promise<void> {
    const claims = batch.flatMap(({ organizationId, write }, index) =>
      outcomes[index] === undefined && write.idempotencyKey !== undefined
        ? [{ index, organizationId, key: write.idempotencyKey, traceId: write.trace.id }]
        : [],
    );
    if (claims.length === 0) return;
    const now = this.clock.now();
    const [holders] = await sendQueries(send, [
      this.repo.claimIdempotencyKeysQuery(claims, now, new Date(now.getTime() - IDEMPOTENCY_TTL_MS)),
    ] as const);
    for (const claim of claims) {
      const holder = holders.get(scoped(claim.organizationId, claim.key));
      if (holder === null) continue;
      // Without a holder the row was purged between conflict and read; the client may simply retry.
      outcomes[claim.index] = holder
        ? { kind: 'duplicate', id: holder }
        : AppError.conflict(
            'The idempotency key is being reused concurrently; retry',
            'SVC_DUPLICATE_REQUEST',
          );
    }
  }
}
