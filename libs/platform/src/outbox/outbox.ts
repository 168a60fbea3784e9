import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import { and, desc, eq, inArray, lt, lte, sql, type SQL } from 'drizzle-orm';
import type { Counter, Gauge } from 'prom-client';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';
import { SecretBox } from '../crypto/secret-box.js';
import { bulkInsert } from '../db/bulk-insert.js';
import { deleteInBatches } from '../db/delete-in-batches.js';
import { type Query, writeQuery } from '../db/query.js';
import { TransactionHost } from '../db/transaction-host.js';
import { newId } from '../ids/object-id.js';
import { Metrics, scrapeCache } from '../metrics/metrics.js';
import { JobScheduler } from '../scheduler/job-scheduler.js';
import { failActiveSpan, type SpanSettings, withSpan } from '../tracing/tracing.js';
import { type OutboxMessageRow, outboxMessages, type OutboxStatus } from './outbox.schema.js';
import type { OutboxPayload, OutboxSecret, OutboxTopic } from './outbox-topics.js';

/** One message handed to its topic's handler. */
export interface OutboxDelivery<T extends OutboxTopic> {
  id: string;
  topic: T;
  organizationId: string | null;
  payload: OutboxPayload<T>;
  /** The unsealed secret part, if the message has one. */
  secret: OutboxSecret<T> | undefined;
  /** This attempt's number, from 1. */
  attempt: number;
  createdAt: Date;
}

export interface OutboxHandler<T extends OutboxTopic> {
  /** Delivers the message; a throw is a failed attempt, retried after the backoff. */
  deliver(message: OutboxDelivery<T>): Promise<void>;
  /** Attempts before the message is `failed` (default 8). */
  maxAttempts?: number;
  /** Pause after the n-th failed attempt; the last value repeats (default 30 s, 2 min, 10 min, 30 min, 1 h). */
  backoffMs?: readonly number[];
  /** How long an attempt may take at most: the row is leased for that long (default 2 min). */
  leaseMs?: number;
  /** Each backoff is spread by up to this fraction either way, so failures of one burst do not retry in step (0). */
  jitter?: number;
}

/**
 * Thrown by a handler to fail an attempt and set when the next one runs (a receiver's `Retry-After`), instead of
 * the handler's backoff. The attempt counts as usual.
 */
export class OutboxRetry extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}

/** The pause after the `attempt`-th failed attempt: the backoff's value (the last repeats), spread by the jitter. */
export function outboxBackoffMs(
  backoffMs: readonly number[],
  attempt: number,
  jitter = 0,
  random: () => number = Math.random,
): number {
  const base = backoffMs[Math.min(Math.max(attempt, 1) - 1, backoffMs.length - 1)]!;
  return Math.round(base * (1 + jitter * (2 * random() - 1)));
}

export interface NewOutboxMessage<T extends OutboxTopic> {
  organizationId?: string | null;
  payload: OutboxPayload<T>;
  secret?: OutboxSecret<T>;
  /** Keep the message (`stored`) without delivering it. */
  hold?: boolean;
}

/** The outcome of an attempt a caller ran itself (see `Outbox.leasedInsertSql`). */
export interface OutboxOutcome {
  id: string;
  status: 'sent' | 'failed' | 'pending';
  nextAttemptAt?: Date;
  error?: string;
}

/** A committed message to deliver. */
export interface OutboxRef {
  id: string;
  topic: OutboxTopic;
}

/** What an operator sees of a message (its secret part unsealed only when asked). */
export type OutboxListing = Omit<OutboxMessageRow, 'sealed'> & { secret?: unknown };

const DEFAULTS = {
  maxAttempts: 8,
  backoffMs: [30_000, 120_000, 600_000, 1_800_000, 3_600_000] as readonly number[],
  leaseMs: 120_000,
  jitter: 0,
};
/** Messages a retry pass delivers at once. */
export const OUTBOX_DISPATCH_CONCURRENCY = 8;
/** Messages claimed per topic by one retry pass. */
export const OUTBOX_CLAIM_BATCH = 20;
/** A message's JSON payload is bounded: an outbox row is not a blob store. */
export const OUTBOX_MAX_PAYLOAD_BYTES = 64 * 1024;
/** Sent messages are kept this long (for operators), then purged; pending, stored and failed ones stay. */
export const OUTBOX_SENT_RETENTION_MS = 7 * 24 * 3600 * 1000;
const PURGE_INTERVAL_MS = 3600 * 1000;
const PURGE_BATCH = 1000;

type RegisteredHandler = Required<OutboxHandler<OutboxTopic>>;

/** The span of one delivery attempt (tracing on): the handler's work (a webhook's send) is traced under it. */
const dispatchSpan = ({ id, topic }: OutboxRef): SpanSettings => ({
  attributes: { 'governance.outbox.topic': topic, 'governance.outbox.message_id': id },
});

/**
 * The transactional outbox. A message is written in the caller's transaction (`enqueue`), or as a query of a
 * pipelined transaction (`enqueueQuery`, then `dispatch` after its commit), so it exists if and only if the change
 * that caused it committed. After the commit this process delivers it at once through its topic's handler; a failed
 * attempt is retried with backoff by the `outbox` job (JobScheduler), which claims due messages with
 * `FOR UPDATE SKIP LOCKED`. Every attempt first leases its row (a conditional update that moves `next_attempt_at`
 * past the attempt's longest duration), so replicas and concurrent passes never run one message twice at once.
 * Messages survive restarts; a process claims only the topics it has a handler for.
 */
@Injectable()
export class Outbox implements OnModuleInit {
  private readonly logger = new Logger('Outbox');
  private readonly handlers = new Map<OutboxTopic, RegisteredHandler>();
  private readonly attempts: Counter<'topic' | 'result'>;
  /** Attempt counters by topic, resolved once per topic. */
  private readonly attemptsOf = new Map<string, { success: Counter.Internal; failure: Counter.Internal }>();
  private readonly backlog: Gauge<'topic'>;
  private readonly oldestDueAge: Gauge<'topic'>;
  /** Topics the backlog gauges report (a topic seen once is reported, at 0, once it has nothing pending). */
  private readonly backlogTopics = new Set<string>();

  constructor(
    private readonly tx: TransactionHost,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly scheduler: JobScheduler,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'outboxRetryIntervalMs'>,
    // Optional for outboxes made by hand (tests of a second replica): they then count into a registry of their own.
    @Optional() metrics: Metrics = new Metrics(),
  ) {
    // Both gauges share one read of the table, at most every 5 s (SCRAPE_CACHE_MS) whatever the scrape rate.
    const readBacklog = scrapeCache(() => this.readBacklog(), {
      now: () => this.clock.nowMs(),
      onError: (err) =>
        this.logger.warn({ err }, 'The outbox backlog could not be read; its gauges keep their last values'),
    });
    this.attempts = metrics.counter({
      name: 'governance_outbox_attempts_total',
      help: 'Outbox delivery attempts, by topic and result',
      labelNames: ['topic', 'result'],
    });
    this.backlog = metrics.gauge({
      name: 'governance_outbox_backlog',
      help: 'Outbox messages pending delivery, by topic (read at most every 5 s)',
      labelNames: ['topic'],
      collect: readBacklog,
    });
    this.oldestDueAge = metrics.gauge({
      name: 'governance_outbox_oldest_due_age_seconds',
      help: 'Seconds since the oldest due, undelivered outbox message became due, by topic; 0 when none is due',
      labelNames: ['topic'],
      collect: readBacklog,
    });
  }

  onModuleInit(): void {
    this.scheduler.register({
      name: 'outbox',
      intervalMs: this.config.outboxRetryIntervalMs,
      // Every worker runs the retry pass: each message is leased by the attempt that takes it, so more workers
      // share the due messages (and a slow receiver holds one lane, not the pass of the whole cluster).
      mode: 'parallel',
      run: () => this.runDue(),
    });
    this.scheduler.register({
      name: 'outbox-purge',
      intervalMs: PURGE_INTERVAL_MS,
      mode: 'once-per-period',
      run: () => this.purgeSent(),
    });
  }

  /**
   * Deletes messages sent more than OUTBOX_SENT_RETENTION_MS ago, in batches, so the table stays bounded by a week
   * of traffic. A sent message's `next_attempt_at` is its last lease, just after it was sent: the due index serves
   * the scan. Returns how many were deleted.
   */
  async purgeSent(): Promise<number> {
    const cutoff = new Date(this.clock.nowMs() - OUTBOX_SENT_RETENTION_MS);
    return deleteInBatches(
      this.tx.db,
      outboxMessages,
      outboxMessages.id,
      and(eq(outboxMessages.status, 'sent'), lt(outboxMessages.nextAttemptAt, cutoff)),
      PURGE_BATCH,
    );
  }

  /** Registers the handler of a topic in this process (one per topic). */
  handle<T extends OutboxTopic>(topic: T, handler: OutboxHandler<T>): void {
    if (this.handlers.has(topic)) throw new Error(`The outbox topic ${topic} already has a handler`);
    this.handlers.set(topic, { ...DEFAULTS, ...handler } as unknown as RegisteredHandler);
  }

  /** Writes a message in the current transaction (or on its own); it is delivered after the commit. */
  async enqueue<T extends OutboxTopic>(topic: T, message: NewOutboxMessage<T>): Promise<string> {
    const row = this.rowOf(topic, message);
    await this.tx.db.insert(outboxMessages).values(row);
    if (row.status === 'pending') this.tx.afterCommit(() => this.dispatch([{ id: row.id, topic }]));
    return row.id;
  }

  /**
   * Delivers committed messages, at most `concurrency` at once. Never rejects. Resolves to how many were already
   * leased by another attempt (another replica's, or this process's after-commit delivery).
   */
  async dispatchConcurrently(
    messages: readonly OutboxRef[],
    concurrency = OUTBOX_DISPATCH_CONCURRENCY,
  ): Promise<number> {
    let next = 0;
    let leasedElsewhere = 0;
    const lane = async () => {
      while (next < messages.length) {
        // Not `leasedElsewhere += await …`: that adds to the value read before the await, losing other lanes'.
        const lost = await this.dispatch([messages[next++]!]);
        leasedElsewhere += lost;
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, messages.length) }, lane));
    return leasedElsewhere;
  }

  /**
   * For a pipelined transaction: the insert of these messages, and those to deliver. Call `dispatch(pending)` once
   * the transaction has committed.
   */
  enqueueQuery<T extends OutboxTopic>(
    topic: T,
    messages: readonly NewOutboxMessage<T>[],
  ): { query: Query<void>; pending: OutboxRef[] } {
    const rows = messages.map((message) => this.rowOf(topic, message));
    return {
      query: writeQuery(...(rows.length > 0 ? [bulkInsert(outboxMessages, rows)] : [])),
      pending: rows.filter((row) => row.status === 'pending').map(({ id }) => ({ id, topic })),
    };
  }

  /**
   * Delivers committed messages now, one after another, if this process handles their topic; failures stay for
   * the retry pass. Never rejects. Resolves to how many were already leased by another attempt.
   */
  async dispatch(messages: readonly OutboxRef[]): Promise<number> {
    let leasedElsewhere = 0;
    for (const message of messages) {
      const leased = await withSpan(
        'outbox.dispatch',
        () => this.deliver(message),
        () => dispatchSpan(message),
      ).catch((err: unknown) => this.logFailure(message.id, err));
      if (leased === false) leasedElsewhere += 1;
    }
    return leasedElsewhere;
  }

  /** Claims due messages of the topics handled here and delivers them; returns how many were claimed. */
  async runDue(topic?: OutboxTopic): Promise<number> {
    const topics = topic ? (this.handlers.has(topic) ? [topic] : []) : [...this.handlers.keys()];
    if (topics.length === 0) return 0;
    const now = this.clock.now();
    const due = await this.tx.run(() =>
      this.tx.db
        .select({ id: outboxMessages.id, topic: outboxMessages.topic })
        .from(outboxMessages)
        .where(
          and(
            eq(outboxMessages.status, 'pending'),
            lte(outboxMessages.nextAttemptAt, now),
            inArray(outboxMessages.topic, topics),
          ),
        )
        .orderBy(outboxMessages.nextAttemptAt)
        .limit(OUTBOX_CLAIM_BATCH)
        .for('update', { skipLocked: true }),
    );
    // A message claimed here whose lease another attempt took first was that attempt's work.
    this.scheduler.claimsLost('outbox', await this.dispatchConcurrently(due as OutboxRef[]));
    return due.length;
  }

  /**
   * One attempt: lease the row (if it is still due), run the handler, record the outcome. Resolves to false when
   * the row was not due any more (leased or delivered by another attempt).
   */
  private async deliver({ id, topic }: OutboxRef): Promise<boolean> {
    const handler = this.handlers.get(topic);
    if (!handler) return true;
    const now = this.clock.now();
    const [row] = await this.tx.db
      .update(outboxMessages)
      // The lease: as long as the handler's longest attempt; the outcome below replaces it.
      .set({
        attempts: sql`${outboxMessages.attempts} + 1`,
        nextAttemptAt: new Date(now.getTime() + handler.leaseMs),
      })
      .where(
        and(
          eq(outboxMessages.id, id),
          eq(outboxMessages.status, 'pending'),
          lte(outboxMessages.nextAttemptAt, now),
        ),
      )
      .returning();
    if (!row) return false;
    const attempts = this.attemptCounters(topic);
    try {
      await handler.deliver({
        id: row.id,
        topic: row.topic as OutboxTopic,
        organizationId: row.organizationId,
        payload: row.payload as never,
        secret: row.sealed ? (JSON.parse(this.box.open(row.sealed)) as never) : undefined,
        attempt: row.attempts,
        createdAt: row.createdAt,
      });
      await this.tx.db
        .update(outboxMessages)
        .set({ status: 'sent', sentAt: this.clock.now(), sealed: null, lastError: null })
        .where(eq(outboxMessages.id, id));
      attempts.success.inc();
    } catch (err) {
      attempts.failure.inc();
      failActiveSpan(err);
      await this.recordFailure(row, handler, err);
    }
    return true;
  }

  /**
   * Counts attempts a caller ran itself (messages from `leasedInsertSql`) once their outcomes, as given to
   * `recordOutcomesSql`, have committed: `sent` is a success, anything else a failure.
   */
  countAttempts(topic: OutboxTopic, outcomes: readonly OutboxOutcome[]): void {
    const attempts = this.attemptCounters(topic);
    let sent = 0;
    for (const outcome of outcomes) if (outcome.status === 'sent') sent += 1;
    if (sent > 0) attempts.success.inc(sent);
    if (outcomes.length > sent) attempts.failure.inc(outcomes.length - sent);
  }

  private attemptCounters(topic: string): { success: Counter.Internal; failure: Counter.Internal } {
    let counters = this.attemptsOf.get(topic);
    if (!counters) {
      counters = {
        success: this.attempts.labels(topic, 'success'),
        failure: this.attempts.labels(topic, 'failure'),
      };
      this.attemptsOf.set(topic, counters);
    }
    return counters;
  }

  /**
   * For a statement that computes its messages in SQL (a consumer creating one attempt per matching row): the
   * INSERT of messages of `topic` selected by `source` (columns `id`, `organization_id`, `payload`), already leased
   * to the caller until `leasedUntil` with their first attempt counted, so the retry pass leaves them alone while
   * the caller attempts them; it then records the outcome with `recordOutcomesSql`. Usable as a data-modifying CTE.
   */
  leasedInsertSql<T extends OutboxTopic>(topic: T, source: SQL, leasedUntil: Date, now: Date): SQL {
    return sql`insert into ${outboxMessages} (id, topic, organization_id, payload, status, attempts, next_attempt_at, created_at)
      select m.id, ${topic}, m.organization_id, m.payload, 'pending', 1, ${leasedUntil.toISOString()}::timestamptz,
        ${now.toISOString()}::timestamptz
      from (${source}) as m`;
  }

  /**
   * The statement that records the outcomes of attempts a caller ran itself (messages from `leasedInsertSql`), in one statement: sent,
   * failed for good, or due again at `nextAttemptAt`.
   */
  recordOutcomesSql(outcomes: readonly OutboxOutcome[]): SQL {
    const now = this.clock.now().toISOString();
    return sql`update ${outboxMessages} as m set
        status = u.status,
        next_attempt_at = coalesce(u.next_attempt_at::timestamptz, m.next_attempt_at),
        last_error = u.last_error,
        sent_at = case when u.status = 'sent' then ${now}::timestamptz else m.sent_at end,
        sealed = case when u.status = 'sent' then null else m.sealed end
      from unnest(
        ${sql.param(outcomes.map((o) => o.id))}::text[],
        ${sql.param(outcomes.map((o) => o.status))}::text[],
        ${sql.param(outcomes.map((o) => o.nextAttemptAt?.toISOString() ?? null))}::text[],
        ${sql.param(outcomes.map((o) => o.error?.slice(0, 500) ?? null))}::text[]
      ) as u(id, status, next_attempt_at, last_error)
      where m.id = u.id`;
  }

  /** Operator view (CLI): newest first; the secret part unsealed when `withSecret`. */
  async list(
    limit: number,
    filter: { topic?: OutboxTopic; statuses?: OutboxStatus[]; withSecret?: boolean } = {},
  ): Promise<OutboxListing[]> {
    const conditions: SQL[] = [];
    if (filter.topic) conditions.push(eq(outboxMessages.topic, filter.topic));
    if (filter.statuses?.length) conditions.push(inArray(outboxMessages.status, filter.statuses));
    const rows = await this.tx.db
      .select()
      .from(outboxMessages)
      .where(and(...conditions))
      .orderBy(desc(outboxMessages.createdAt), desc(outboxMessages.id))
      .limit(Math.min(Math.max(limit, 1), 1000));
    return rows.map(({ sealed, ...rest }) =>
      filter.withSecret
        ? { ...rest, secret: sealed ? (JSON.parse(this.box.open(sealed)) as unknown) : null }
        : rest,
    );
  }

  private rowOf<T extends OutboxTopic>(topic: T, message: NewOutboxMessage<T>): OutboxMessageRow {
    const payload = message.payload as unknown as Record<string, unknown>;
    const size = Buffer.byteLength(JSON.stringify(payload));
    if (size > OUTBOX_MAX_PAYLOAD_BYTES) {
      throw new Error(`An outbox message of ${topic} is ${size} bytes; at most ${OUTBOX_MAX_PAYLOAD_BYTES}`);
    }
    const now = this.clock.now();
    return {
      id: newId(now.getTime()),
      topic,
      organizationId: message.organizationId ?? null,
      payload,
      sealed: message.secret === undefined ? null : this.box.seal(JSON.stringify(message.secret)),
      status: message.hold ? 'stored' : 'pending',
      attempts: 0,
      lastError: null,
      nextAttemptAt: now,
      createdAt: now,
      sentAt: null,
    };
  }

  private async recordFailure(
    row: OutboxMessageRow,
    handler: RegisteredHandler,
    err: unknown,
  ): Promise<void> {
    const failed = row.attempts >= handler.maxAttempts;
    const delay =
      err instanceof OutboxRetry
        ? Math.max(0, err.delayMs)
        : outboxBackoffMs(handler.backoffMs, row.attempts, handler.jitter);
    const message = err instanceof Error ? err.message : String(err);
    this.logger.warn(
      { outboxId: row.id, topic: row.topic, attempts: row.attempts, error: message.slice(0, 200) },
      failed ? 'Outbox message failed for good' : 'Outbox delivery failed; retrying after the backoff',
    );
    await this.tx.db
      .update(outboxMessages)
      .set({
        status: failed ? 'failed' : 'pending',
        lastError: message.slice(0, 500),
        nextAttemptAt: new Date(this.clock.nowMs() + delay),
      })
      .where(eq(outboxMessages.id, row.id));
  }

  /**
   * Sets the backlog gauges, by topic: messages pending (leased ones included), and the age of the oldest one due.
   * One statement over the pending messages only, through the due index (status, next_attempt_at): its cost is the
   * backlog's size, not the table's (sent messages are kept a week).
   */
  private async readBacklog(): Promise<void> {
    const at = sql`${this.clock.now().toISOString()}::timestamptz`;
    const rows = await this.tx.db
      .select({
        topic: outboxMessages.topic,
        pending: sql<number>`count(*)::int`,
        oldestDueAge: sql<number | null>`extract(epoch from ${at} - min(${outboxMessages.nextAttemptAt})
          filter (where ${outboxMessages.nextAttemptAt} <= ${at}))::float8`,
      })
      .from(outboxMessages)
      .where(eq(outboxMessages.status, 'pending'))
      .groupBy(outboxMessages.topic);
    for (const topic of this.handlers.keys()) this.backlogTopics.add(topic);
    for (const row of rows) this.backlogTopics.add(row.topic);
    const byTopic = new Map(rows.map((row) => [row.topic, row]));
    for (const topic of this.backlogTopics) {
      const row = byTopic.get(topic);
      this.backlog.set({ topic }, row?.pending ?? 0);
      this.oldestDueAge.set({ topic }, Math.max(0, row?.oldestDueAge ?? 0));
    }
  }

  private logFailure(id: string, err: unknown): void {
    this.logger.warn(
      { outboxId: id, err },
      'Outbox dispatch failed; the retry pass will pick the message up',
    );
  }
}
