import { Injectable } from '@nestjs/common';
import {
  AppError,
  Clock,
  isObjectId,
  newId,
  type Actor,
  type Page,
  type RequestMeta,
  pageRequest,
  type Query,
  toPage,
  TransactionHost,
} from '#platform';
import { chainHash, cleanText, GENESIS_HASH, normaliseMetadata } from './audit-hash.js';
import { AuditRepository, type ChainHead } from './audit.repository.js';
import type { AuditActor, AuditEntryRow } from './audit.schema.js';
import {
  type AuditEntryDto,
  type AuditQueryDto,
  type AuditVerifyDto,
  toAuditEntryResponse,
} from './dto/audit.dto.js';

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

const VERIFY_BATCH = 1000;

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
        eventType: input.eventType,
        userId: input.userId ?? (input.actor.type === 'user' ? input.actor.id : null),
        actor: input.actor,
        targetType: input.targetType ?? null,
        targetId: input.targetId ?? null,
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

@Injectable()
export class AuditService {
  constructor(
    private readonly repo: AuditRepository,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

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
      await this.repo.lockChains(organizationIds);
      const chains = new OpenChains(organizationIds, await this.repo.heads(organizationIds), this.clock);
      const entries = chains.next(inputs);
      await this.repo.insertMany(entries);
      return entries;
    });
  }

  /**
   * For a pipelined transaction (the group commit of trace ingestion): locks these organizations' chains until it
   * ends and reads their heads. Entries computed from the result with `next` are inserted with `insertQuery` in
   * the same transaction.
   */
  openChainsQuery(organizationIds: string[]): Query<OpenChains> {
    const query = this.repo.openChainsQuery(organizationIds);
    return { ...query, read: (results) => new OpenChains(organizationIds, query.read(results), this.clock) };
  }

  insertQuery(entries: AuditEntryRow[]): Query<void> {
    return this.repo.insertQuery(entries);
  }

  async list(organizationId: string, query: AuditQueryDto): Promise<Page<AuditEntryDto>> {
    const from = query.from ? new Date(query.from) : undefined;
    const to = query.to ? new Date(query.to) : undefined;
    if (from && to && from > to)
      throw AppError.validation('from must not be after to', [
        { field: 'from', message: 'from must not be after to' },
      ]);
    const page = pageRequest(query, { limit: 50, max: 200 });
    const { rows, total } = await this.repo.list(
      organizationId,
      { from, to, eventType: query.eventType, userId: query.userId },
      page,
    );
    return toPage(rows.map(toAuditEntryResponse), total, page);
  }

  async findEntry(organizationId: string, id: string): Promise<AuditEntryRow | undefined> {
    return isObjectId(id) ? this.repo.findById(organizationId, id) : undefined;
  }

  async get(organizationId: string, id: string): Promise<AuditEntryDto> {
    const row = await this.findEntry(organizationId, id);
    if (!row) throw AppError.notFound('Audit entry');
    return toAuditEntryResponse(row);
  }

  /** Entries of the chain in order, read in batches so memory does not grow with the log. */
  async *entries(organizationId: string): AsyncGenerator<AuditEntryRow> {
    let after = 0;
    for (;;) {
      const batch = await this.repo.batch(organizationId, after, VERIFY_BATCH);
      for (const row of batch) yield row;
      if (batch.length < VERIFY_BATCH) return;
      after = batch[batch.length - 1]!.sequence;
    }
  }

  /** Recomputes every link of the chain; reports the first entry that breaks it. */
  async verify(organizationId: string): Promise<AuditVerifyDto> {
    let expectedSequence = 1;
    let prevHash = GENESIS_HASH;
    let first: AuditEntryRow | undefined;
    let last: AuditEntryRow | undefined;
    for await (const row of this.entries(organizationId)) {
      first ??= row;
      const reason =
        row.sequence !== expectedSequence
          ? 'sequence_gap'
          : row.prevHash !== prevHash
            ? 'prev_hash_mismatch'
            : row.hash !== chainHash(row.prevHash, row)
              ? 'hash_mismatch'
              : undefined;
      if (reason) {
        const bounds = await this.repo.bounds(organizationId);
        return {
          valid: false,
          totalEntries: bounds.total,
          firstEntry: bounds.first?.toISOString() ?? null,
          lastEntry: bounds.last?.toISOString() ?? null,
          brokenAt: { sequence: row.sequence, id: row.id, reason },
        };
      }
      last = row;
      prevHash = row.hash;
      expectedSequence += 1;
    }
    return {
      valid: true,
      totalEntries: expectedSequence - 1,
      firstEntry: first?.createdAt.toISOString() ?? null,
      lastEntry: last?.createdAt.toISOString() ?? null,
    };
  }

  /** The chain as NDJSON lines, one entry each, for offline verification. */
  async *exportNdjson(organizationId: string): AsyncGenerator<string> {
    for await (const row of this.entries(organizationId)) {
      yield JSON.stringify(toAuditEntryResponse(row)) + '\n';
    }
  }
}
