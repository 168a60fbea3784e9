import { Injectable } from '@nestjs/common';
import type { Counter } from 'prom-client';
import { Clock } from '../clock/clock.js';
import type { Query } from '../db/query.js';
import { lockStatement, TransactionHost } from '../db/transaction-host.js';
import { newId } from '../ids/object-id.js';
import { Metrics } from '../metrics/metrics.js';
import { type NewOutboxMessage, Outbox } from '../outbox/outbox.js';
import type { OutboxTopic } from '../outbox/outbox-topics.js';
import type { Actor, RequestMeta } from '../security/actor.js';
import { chainHash, cleanText, GENESIS_HASH, normaliseMetadata } from './audit-hash.js';
import type { AuditActor, AuditEntryRow } from './audit.schema.js';
import { AuditLogRepository } from './audit-log.repository.js';

export interface AuditInput {
  organizationId: string;
  eventType: string;
  actor: AuditActor;
  userId?: string | null;
  targetType?: string | null;
  targetId?: string | null;
  metadata?: Record<string, unknown>;
  meta?: RequestMeta;
}

export type ChainHead = Pick<AuditEntryRow, 'sequence' | 'hash'>;

/**
 * Who did what is recorded: the caller as the access guard resolved it (its organization is the entry's), or, where
 * there is no such caller yet (registration, login, invitations accepted, the system), an audit actor in a named
 * organization.
 */
export type AuditSubject = Actor | { organizationId: string; actor: AuditActor; userId?: string | null };

/** What the event is about. */
export interface AuditTarget {
  type: string;
  id: string | null;
}

/** Turns an audit entry into the outbox message that announces it (a domain event for webhooks and streams). */
export type AuditPublisher<T extends OutboxTopic> = (entry: AuditEntryRow) => NewOutboxMessage<T> | null;

const isGuardActor = (subject: AuditSubject): subject is Actor => 'credential' in subject;

/** The key of an organization's write lock: the lock of its audit chain. */
const organizationLockKey = (organizationId: string) => `audit:${organizationId}`;

/**
 * Chains locked by the current transaction, from their heads: `next` computes the entries that follow (sequence,
 * prevHash, hash) and advances the heads. The caller inserts the entries in the same transaction.
 */
export class OpenChains {
  private readonly heads: Map<string, ChainHead | null>;

  constructor(
    organizationIds: string[],
    found: Map<string, ChainHead>,
    private readonly clock: Clock,
  ) {
    this.heads = new Map(organizationIds.map((id) => [id, found.get(id) ?? null]));
  }

  next(inputs: readonly AuditInput[]): AuditEntryRow[] {
    const now = this.clock.now();
    return inputs.map((input) => {
      const head = this.heads.get(input.organizationId);
      if (head === undefined) throw new Error(`The chain of ${input.organizationId} is not open`);
      const content = {
        sequence: (head?.sequence ?? 0) + 1,
        organizationId: input.organizationId,
        eventType: cleanText(input.eventType),
        userId: input.userId ?? (input.actor.type === 'user' ? input.actor.id : null),
        actor: cleanActor(input.actor),
        targetType:
          input.targetType === undefined || input.targetType === null ? null : cleanText(input.targetType),
        targetId: input.targetId === undefined || input.targetId === null ? null : cleanText(input.targetId),
        metadata: normaliseMetadata(input.metadata),
        ip: input.meta?.ip?.slice(0, 64) ?? null,
        userAgent: input.meta?.userAgent ? cleanText(input.meta.userAgent.slice(0, 512)) : null,
        createdAt: now,
      };
      const prevHash = head?.hash ?? GENESIS_HASH;
      const row: AuditEntryRow = {
        id: newId(now.getTime()),
        ...content,
        prevHash,
        hash: chainHash(prevHash, content),
      };
      this.heads.set(input.organizationId, row);
      return row;
    });
  }
}

/**
 * The actor as jsonb will store it (strings well-formed, without NUL), so that the hash computed here is the one a
 * verification recomputes from the stored row, and jsonb never refuses it.
 */
function cleanActor(actor: AuditActor): AuditActor {
  return {
    type: actor.type,
    id: actor.id === null ? null : cleanText(actor.id),
    email: actor.email === null ? null : cleanText(actor.email),
  };
}

/** The actor of an audit entry, from the caller resolved by the access guard. */
export function auditActorOf(actor: Actor): AuditActor {
  switch (actor.credential) {
    case 'jwt':
      return { type: 'user', id: actor.userId, email: actor.email };
    case 'workspaceKey':
      return { type: 'api_key', id: actor.keyId ?? null, email: null };
    case 'agentKey':
      return { type: 'agent', id: actor.agentId ?? null, email: null };
  }
}

/**
 * The audit log's write side: one hash chain per organization, appended inside the caller's transaction under the
 * organization's write lock (a transaction-scoped advisory lock). Reading, verification and export belong to the
 * governance audit module.
 */
@Injectable()
export class AuditLog {
  /** The event map: which audit events are also published, to which outbox topic, as what. */
  private readonly publishers = new Map<
    string,
    { topic: OutboxTopic; publish: AuditPublisher<OutboxTopic> }[]
  >();
  private readonly appended: Counter;

  constructor(
    private readonly tx: TransactionHost,
    private readonly repo: AuditLogRepository,
    private readonly clock: Clock,
    private readonly outbox: Outbox,
    metrics: Metrics,
  ) {
    this.appended = metrics.counter({
      name: 'governance_audit_entries_appended_total',
      help: 'Audit entries written (committed)',
    });
  }

  /**
   * Declares that an audit event is also a domain event: each entry of `eventType` written through `record` is
   * followed, in the same transaction, by the outbox message `publish` makes of it (none when it returns null).
   * Modules declare their events while they initialise (webhooks and the event stream subscribe to the topic).
   */
  publishes<T extends OutboxTopic>(eventType: string, topic: T, publish: AuditPublisher<T>): void {
    const list = this.publishers.get(eventType) ?? [];
    list.push({ topic, publish: publish as unknown as AuditPublisher<OutboxTopic> });
    this.publishers.set(eventType, list);
  }

  /**
   * Records an event: its audit entry, appended to the organization's chain, and the outbox messages the event map
   * declares for it, in the caller's transaction (or one of its own), so that both commit or neither does.
   */
  record(
    subject: AuditSubject,
    eventType: string,
    target: AuditTarget | null,
    metadata?: Record<string, unknown>,
    meta?: RequestMeta,
  ): Promise<AuditEntryRow> {
    const who = isGuardActor(subject)
      ? { organizationId: subject.organizationId, actor: auditActorOf(subject) }
      : subject;
    return this.tx.run(async () => {
      const entry = await this.append({
        ...who,
        eventType,
        targetType: target?.type ?? null,
        targetId: target?.id ?? null,
        metadata,
        meta,
      });
      for (const { topic, publish } of this.publishers.get(eventType) ?? []) {
        const message = publish(entry);
        if (message) await this.outbox.enqueue(topic, message);
      }
      return entry;
    });
  }

  /**
   * Takes the organization's write lock until the current transaction ends (a no-op if it already holds it). It
   * is the lock of the audit chain, so it serialises this transaction with every audited change of the
   * organization and with trace ingestion, which re-checks agents and keys under it. With READ COMMITTED, the next
   * statement of the other holder then sees this transaction's committed changes.
   */
  lockOrganization(organizationId: string): Promise<void> {
    return this.tx.lock(organizationLockKey(organizationId));
  }

  /**
   * Appends to the organization's chain inside the caller's transaction (or its own). The chain lock is held
   * until that transaction ends, so concurrent appends queue instead of forking.
   */
  async append(input: AuditInput): Promise<AuditEntryRow> {
    const [row] = await this.appendMany([input]);
    return row!;
  }

  /**
   * Appends several entries, of one or several organizations, each chain in the order given, with one lock
   * statement, one read of the chain heads and one insert. Same lock and transaction rules as `append`.
   */
  appendMany(inputs: readonly AuditInput[]): Promise<AuditEntryRow[]> {
    if (inputs.length === 0) return Promise.resolve([]);
    return this.tx.run(async () => {
      const organizationIds = [...new Set(inputs.map((input) => input.organizationId))];
      await this.tx.lock(...organizationIds.map(organizationLockKey));
      const chains = new OpenChains(
        organizationIds,
        await this.tx.query(this.repo.headsQuery(organizationIds)),
        this.clock,
      );
      const entries = chains.next(inputs);
      await this.tx.query(this.repo.insertQuery(entries));
      // Counted once written for good: the caller's transaction may still roll back.
      this.tx.afterCommit(() => this.appended.inc(entries.length));
      return entries;
    });
  }

  /**
   * For a pipelined transaction (the group commit of trace ingestion): locks these organizations' chains until it
   * ends and reads their heads, as one query whose statements run in order, so the head read takes its snapshot
   * after the locks are granted. Entries computed from the result with `next` are inserted with `insertQuery` in
   * the same transaction.
   */
  openChainsQuery(organizationIds: string[]): Query<OpenChains> {
    const heads = this.repo.headsQuery(organizationIds);
    return {
      statements: [lockStatement(organizationIds.map(organizationLockKey)), ...heads.statements],
      read: ([, rows]) => new OpenChains(organizationIds, heads.read([rows!]), this.clock),
    };
  }

  /** Entries by id (any organization: the caller checks), for the events that audit entries announce. */
  byIds(ids: readonly string[]): Promise<AuditEntryRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.repo.byIds(ids);
  }

  /**
   * The insert of entries computed with `OpenChains.next`, for a pipelined transaction. They are counted when the
   * query is read, that is once its statements have run: send it with the COMMIT (as the trace writer does).
   */
  insertQuery(entries: AuditEntryRow[]): Query<void> {
    const insert = this.repo.insertQuery(entries);
    return {
      statements: insert.statements,
      read: (results) => {
        insert.read(results);
        if (entries.length > 0) this.appended.inc(entries.length);
      },
    };
  }
}
