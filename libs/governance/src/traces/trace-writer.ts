import { type BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  AppError,
  type AuditInput,
  AuditLog,
  bindTraced,
  Clock,
  DomainEvents,
  ErrorCode,
  failActiveSpan,
  isDatabaseUnavailable,
  linkTo,
  Metrics,
  type SendStatements,
  sendQueries,
  type SpanSettings,
  tracedContext,
  TransactionHost,
  withSpan,
  writeQuery,
  sqlState,
} from '#platform';
import { type Context, type Link, ROOT_CONTEXT } from '@opentelemetry/api';
import { sql } from 'drizzle-orm';
import type { Counter, Histogram } from 'prom-client';
import { AgentKeysRepository } from '#identity';
import { AgentsRepository } from '../agents/agents.repository.js';
import type { ReviewItemRow } from '../review/review-item.schema.js';
import { ReviewItemsRepository } from '../review/review-items.repository.js';
import type { TraceRow, TraceStatus } from './trace.schema.js';
import type { IngestOutcome } from './ingest-outcome.js';
import { TraceErrorCode } from './traces.errors.js';
import { TracesRepository } from './traces.repository.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** Where a trace came in: POST /traces or the OTLP endpoint (a label of the ingestion counter). */
export type TraceSource = 'http' | 'otlp';
/** The statuses ingestion stores a trace with. */
const INGESTED_OUTCOMES = ['approved', 'flagged', 'blocked'] as const satisfies readonly TraceStatus[];
/** Traces per group commit: powers of two up to the largest batch. */
const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/** One ingested trace, ready to store: what POST /traces and OTLP decided before touching the database. */
export interface TraceWrite {
  trace: TraceRow;
  /** The pending review item of a flagged trace. */
  reviewItem: ReviewItemRow | null;
  /** The trace's audit entry, which is also its event (`trace.approved|flagged|blocked`, see TracesModule). */
  audit: Omit<AuditInput, 'organizationId'>;
  idempotencyKey?: string;
  /** The API key that sent the trace: the write is refused if it was revoked before the write commits. */
  keyId?: string | null;
}

interface Pending {
  organizationId: string;
  write: TraceWrite;
  source: TraceSource;
  /** The request's trace context when tracing is on: its batch's span is a child of it, or linked to it. */
  traced: Context | undefined;
  resolve: (outcome: IngestOutcome) => void;
  reject: (err: unknown) => void;
  /**
   * Later traces of the batch with the same organization and Idempotency-Key: they are duplicates of whatever this
   * one turns out to be, or, if it is refused, go back to the queue.
   */
  followers?: Pending[];
}

/** 400 naming agentId: the agent is not (or no longer) one of the organization's. */
export const unknownAgentError = () =>
  AppError.validation('agentId does not name an agent of this organization', [
    { field: 'agentId', message: 'agentId does not name an agent of this organization' },
  ]);

/**
 * Whether the database refused a row (a data exception, a constraint, a trigger's raise): the other traces of the
 * batch may well be fine.
 */
export function isRowError(err: unknown): boolean {
  const state = sqlState(err);
  return state !== undefined && ['22', '23', 'P0'].includes(state.slice(0, 2));
}

/**
 * Whether the failure is the database's, not the batch's (isDatabaseUnavailable: unreachable, a connection lost or
 * timed out, a deadlock, a resource or lock timeout, a server shutting down), or a 503 of our own. Any other error is
 * a fault, answered 500 as everywhere else.
 */
export function isTransient(err: unknown): boolean {
  return err instanceof AppError ? err.status === 503 : isDatabaseUnavailable(err);
}

const unavailable = (message: string, cause?: unknown) =>
  new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, `${message}; retry shortly`, {
    headers: { 'Retry-After': '1' },
    cause,
  });

/** `organizationId:value`; organization ids are hex, so the first colon separates. */
const scoped = (organizationId: string, value: string) => `${organizationId}:${value}`;

/**
 * A batch's span (tracing on). A group commit serves several requests and a span has one parent: the batch is a
 * child of its first trace's request span, and linked to the other requests' spans (docs/operators.md, "Tracing the
 * service").
 */
function batchSpan(batch: Pending[]): SpanSettings {
  const parent = batch[0]!.traced ?? ROOT_CONTEXT;
  const seen = new Set([linkTo(parent)?.context.spanId]);
  const links: Link[] = [];
  let traces = 0;
  for (const first of batch) {
    for (const item of [first, ...(first.followers ?? [])]) {
      traces += 1;
      const link = linkTo(item.traced);
      if (link && !seen.has(link.context.spanId)) {
        seen.add(link.context.spanId);
        links.push(link);
      }
    }
  }
  const organizations = new Set(batch.map((item) => item.organizationId)).size;
  return {
    parent,
    links,
    attributes: { 'governance.batch.traces': traces, 'governance.batch.organizations': organizations },
  };
}

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
 * agent's deletion, a key's regeneration and a key's revocation take the same lock, `AuditLog.lockOrganization`,
 * so none can interleave), and claims its idempotency keys. A batch the database refuses for a row is retried
 * trace by trace, so that one bad trace fails alone; a batch the database fails as a whole (unreachable, lock
 * timeout) answers 503 for each of its traces.
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
  /** Committed batches whose answers and consumers have not run yet. */
  private readonly finishing = new Set<Promise<void>>();
  /** The ingestion counter's children by source and outcome, resolved once: counting is one addition. */
  private readonly ingested: Record<TraceSource, Partial<Record<TraceStatus, Counter.Internal>>>;
  private readonly replays: Counter;
  private readonly batchSizes: Histogram;
  private readonly commitSeconds: Histogram;

  constructor(
    private readonly repo: TracesRepository,
    private readonly agents: AgentsRepository,
    private readonly keys: AgentKeysRepository,
    private readonly reviewItems: ReviewItemsRepository,
    private readonly audit: AuditLog,
    private readonly events: DomainEvents,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
    metrics: Metrics,
  ) {
    this.options = config.ingest;
    const ingested = metrics.counter({
      name: 'governance_traces_ingested_total',
      help: 'Traces committed, by outcome and source',
      labelNames: ['outcome', 'source'],
    });
    const bySource = (source: TraceSource) =>
      Object.fromEntries(INGESTED_OUTCOMES.map((outcome) => [outcome, ingested.labels(outcome, source)]));
    this.ingested = { http: bySource('http'), otlp: bySource('otlp') };
    this.replays = metrics.counter({
      name: 'governance_trace_idempotent_replays_total',
      help: 'Traces answered 409 because their Idempotency-Key was already used',
    });
    this.batchSizes = metrics.histogram({
      name: 'governance_trace_writer_batch_size',
      help: 'Traces per group commit of the trace writer',
      buckets: BATCH_SIZE_BUCKETS,
    });
    this.commitSeconds = metrics.histogram({
      name: 'governance_trace_writer_batch_commit_seconds',
      help: "A trace writer batch's transaction, from begin to commit",
    });
  }

  /** Stores the trace; resolves once it has committed (or is found to repeat an idempotency key). */
  write(organizationId: string, write: TraceWrite, source: TraceSource = 'http'): Promise<IngestOutcome> {
    return this.writeAll(organizationId, [write], source)[0]!;
  }

  /**
   * Stores the traces of one request (the spans of an OTLP export): all are accepted, or none when they would
   * take the writer past INGEST_MAX_PENDING (503, so that the client's retry cannot store some of them twice;
   * 413 when they are more than it ever accepts at once). Each resolves on its own once committed.
   */
  writeAll(
    organizationId: string,
    writes: TraceWrite[],
    source: TraceSource = 'http',
  ): Promise<IngestOutcome>[] {
    if (writes.length > this.options.maxPending) {
      // Could never be accepted: a retry would fail the same way, so this is not a 503.
      throw new AppError(
        413,
        ErrorCode.PAYLOAD_TOO_LARGE,
        `At most ${this.options.maxPending} traces can be accepted at once; split the export`,
      );
    }
    if (this.inFlight + writes.length > this.options.maxPending) throw unavailable('Ingestion is saturated');
    const traced = tracedContext();
    const outcomes = writes.map(
      (write) =>
        new Promise<IngestOutcome>((resolve, reject) => {
          this.queue.push({ organizationId, write, source, traced, resolve, reject });
        }),
    );
    this.pump();
    return outcomes;
  }

  /** Shutdown waits for every accepted trace to be written and answered, and its events handed on, before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    while (this.active || this.finishing.size > 0) {
      await this.active;
      await Promise.all(this.finishing);
    }
  }

  /** Traces accepted and not yet answered (for diagnostics, back-pressure and tests). */
  get inFlight(): number {
    return this.queue.length + this.writing;
  }

  /**
   * Writes the queue, one batch at a time, until it is empty. One transaction at a time is the fastest: a second
   * one would wait on the chain locks the first holds, and smaller batches cost more statements per trace. When a
   * batch has committed, the next one starts before the first's answers are written (they are written on the next
   * turn of the event loop): its statements reach the database first, and the answers are written while it works.
   */
  private pump(): void {
    if (this.active || this.queue.length === 0) return;
    const batch = this.takeBatch();
    this.writing = batch.reduce((n, item) => n + 1 + (item.followers?.length ?? 0), 0);
    const committed = withSpan(
      'trace-writer.batch',
      () => this.commit(batch),
      () => batchSpan(batch),
    );
    this.active = committed.then((finish) => {
      this.writing = 0;
      this.active = null;
      this.pump();
      const finished = new Promise<void>((resolve) =>
        setImmediate(() => {
          finish();
          // Traces that followed a refused one's Idempotency-Key went back to the queue.
          this.pump();
          // After the consumers `finish` scheduled.
          setImmediate(resolve);
        }),
      );
      this.finishing.add(finished);
      void finished.then(() => this.finishing.delete(finished));
    });
  }

  /**
   * The next batch, in arrival order: up to `maxBatch` traces, each later one repeating an organization's
   * Idempotency-Key following the first (it adds no row, and is answered when the first is).
   */
  private takeBatch(): Pending[] {
    const batch: Pending[] = [];
    const firsts = new Map<string, Pending>();
    let taken = 0;
    while (taken < this.queue.length && batch.length < this.options.maxBatch) {
      const item = this.queue[taken++]!;
      const key = item.write.idempotencyKey;
      if (key !== undefined) {
        const claim = scoped(item.organizationId, key);
        const first = firsts.get(claim);
        if (first) {
          (first.followers ??= []).push(item);
          continue;
        }
        firsts.set(claim, item);
      }
      batch.push(item);
    }
    this.queue = this.queue.slice(taken);
    return batch;
  }

  /**
   * Writes the batch; answers with what settles its traces and then runs the events' consumers (webhook attempts,
   * streams) on the next turn, so that they never delay the answers. Never rejects.
   */
  private async commit(batch: Pending[]): Promise<() => void> {
    let outcomes: (IngestOutcome | Error)[];
    let afterCommit: (() => void) | undefined;
    try {
      const started = performance.now();
      const written = await this.tx.pipelined((send) => this.writeBatch(send, batch));
      this.commitSeconds.observe((performance.now() - started) / 1000);
      this.batchSizes.observe(batch.length);
      outcomes = written.outcomes;
      // Webhook attempts and stream fan-out of this batch's events are traced under its span.
      afterCommit = bindTraced(written.afterCommit);
    } catch (err) {
      if (batch.length > 1 && isRowError(err)) {
        // Isolate what the database refused: nothing of the batch committed, so each trace is tried on its own.
        const finishes: (() => void)[] = [];
        for (const item of batch) finishes.push(await this.commit([item]));
        return () => finishes.forEach((finish) => finish());
      }
      // A refused single trace, or the database itself failing (unreachable, lock timeout, shutting down):
      // retrying trace by trace would only multiply the wait.
      const failure = isTransient(err) ? unavailable('Ingestion is unavailable', err) : (err as Error);
      failActiveSpan(err);
      outcomes = batch.map(() => failure);
    }
    return () => {
      batch.forEach((item, i) => this.settle(item, outcomes[i]!));
      if (afterCommit) setImmediate(afterCommit);
    };
  }

  /** Answers a trace and the traces that repeated its Idempotency-Key in the batch. */
  private settle(item: Pending, outcome: IngestOutcome | Error): void {
    if (outcome instanceof Error) item.reject(outcome);
    else {
      item.resolve(outcome);
      if (outcome.kind === 'stored') this.ingested[item.source][outcome.trace.status]?.inc();
      else this.replays.inc();
    }
    if (!item.followers) return;
    if (!(outcome instanceof Error)) {
      const id = outcome.kind === 'stored' ? outcome.trace.id : outcome.id;
      for (const follower of item.followers) follower.resolve({ kind: 'duplicate', id });
      this.replays.inc(item.followers.length);
    } else if (outcome instanceof AppError && outcome.status < 500) {
      // The first was refused for itself (its agent, its key): the others did not claim the key and are tried again.
      this.queue.unshift(...item.followers);
    } else {
      // The database failed the batch: the others would fail the same way now.
      for (const follower of item.followers) follower.reject(outcome);
    }
  }

  /**
   * One transaction in two round trips (three with idempotency keys): lock the chains and read their heads with
   * the live agents and keys; claim idempotency keys; insert traces, review items and audit entries, with COMMIT.
   */
  private async writeBatch(
    send: SendStatements,
    batch: Pending[],
  ): Promise<{ outcomes: (IngestOutcome | Error)[]; afterCommit: () => void }> {
    const organizationIds = [...new Set(batch.map((p) => p.organizationId))];
    const [, chains, liveAgents, liveKeys, interest] = await sendQueries(send, [
      // A chain lock held elsewhere (a stuck transaction) fails the batch with 503 instead of stalling ingestion.
      writeQuery(sql.raw(`set local lock_timeout = ${Math.trunc(this.options.lockTimeoutMs)}`)),
      this.audit.openChainsQuery(organizationIds),
      this.agents.liveAgentsQuery(
        batch.map((p) => ({ organizationId: p.organizationId, id: p.write.trace.agentId })),
      ),
      this.keys.liveKeysQuery(
        batch.flatMap((p) =>
          p.write.keyId ? [{ organizationId: p.organizationId, id: p.write.keyId }] : [],
        ),
      ),
      // Under the locks: which organizations' events have consumers (webhooks), read like the agents and keys.
      this.events.interestQuery(organizationIds),
    ] as const);
    const outcomes: (IngestOutcome | AppError | undefined)[] = batch.map(({ organizationId, write }) =>
      write.keyId && !liveKeys.has(scoped(organizationId, write.keyId))
        ? AppError.unauthorized('Invalid API key')
        : liveAgents.has(scoped(organizationId, write.trace.agentId))
          ? undefined
          : unknownAgentError(),
    );
    await this.settleIdempotencyKeys(send, batch, outcomes);

    const stored = batch.filter((_, i) => outcomes[i] === undefined);
    const entries = chains.next(stored.map((p) => ({ organizationId: p.organizationId, ...p.write.audit })));
    // The entry that records each trace's content hash, for GET /traces/:id/verify.
    stored.forEach((p, i) => (p.write.trace.contentEntryId = entries[i]!.id));
    // Each trace's audit entry is its domain event: published with it, not stored twice.
    const events = this.events.prepare(
      [],
      entries.flatMap((entry) => this.events.fromAudit(entry) ?? []),
      interest,
    );
    const [, , , afterCommit] = await sendQueries(
      send,
      [
        this.repo.insertTracesQuery(stored.map((p) => p.write.trace)),
        this.reviewItems.insertQuery(stored.flatMap((p) => (p.write.reviewItem ? [p.write.reviewItem] : []))),
        this.audit.insertQuery(entries),
        events.query,
      ] as const,
      { commit: true },
    );
    return {
      outcomes: outcomes.map((o, i) => o ?? { kind: 'stored', trace: batch[i]!.write.trace }),
      afterCommit,
    };
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
            TraceErrorCode.DUPLICATE_REQUEST,
          );
    }
  }
}
