import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import {
  AppError,
  type AuditEntryRow,
  Clock,
  ErrorCode,
  GENESIS_HASH,
  isObjectId,
  Metrics,
  type Page,
  pageRequest,
  Semaphore,
  SemaphoreFullError,
  toPage,
} from '#platform';
import type { Counter, Gauge } from 'prom-client';
import type { AuditChainCheckpointRow } from './audit-checkpoint.schema.js';
import { AuditChainReader, ChainHasher, Col, exportLine } from './audit-chain-reader.js';
import { AuditContentCheck, type ContentCheckResult } from './audit-content-check.js';
import { AuditRepository } from './audit.repository.js';
import {
  type AuditEntryDto,
  type AuditQueryDto,
  type AuditVerifyDto,
  toAuditEntryResponse,
} from './dto/audit.dto.js';

/** Whole-chain reads (verifications, exports) running at once in a process, and how many may wait for a turn. */
const WALKS_AT_ONCE = 2;
const WALKS_WAITING = 32;

/** Filtered lists count at most this many matches (beyond the page asked for); `pagination.totalCapped` says so. */
export const LIST_COUNT_CAP = 10_000;

/**
 * How long after a trace's creation its ingestion's audit entry may be written: a trace commits within its request
 * (the same bound as the rollups' ROLLUP_GRACE_MS).
 */
const TRACE_ENTRY_WINDOW_MS = 10 * 60_000;

/** The chain as a report shows it (`chainState`). */
export interface ChainState {
  valid: boolean;
  totalEntries: number;
  headHash: string | null;
  brokenAt?: { sequence: number; id: string | null; reason: string };
  /** The first sequence this verification checked: 1, or the one after the verified prefix. */
  verifiedFrom: number;
  /** When a verification from the first entry last passed; null when the chain is broken and none is recent. */
  fullyVerifiedAt: Date | null;
}

/** The audit log's read side: list, one entry, verification, export. The platform's AuditLog writes the entries. */
@Injectable()
export class AuditService {
  /** Walks in progress, by organization and starting point. */
  private readonly walks = new Map<string, Promise<Walked>>();
  /** Content checks in progress, by organization. */
  private readonly contentChecks = new Map<string, Promise<ContentCheckResult>>();
  /** Reads of a whole chain (walks, exports) at once in this process, and how many may wait. */
  private readonly chainReads = new Semaphore(WALKS_AT_ONCE, WALKS_WAITING);
  private readonly verifiedValid: Counter.Internal;
  private readonly verifiedInvalid: Counter.Internal;
  private readonly entriesPerSecond: Gauge;

  constructor(
    private readonly repo: AuditRepository,
    private readonly reader: AuditChainReader,
    private readonly clock: Clock,
    private readonly content: AuditContentCheck,
    metrics: Metrics,
  ) {
    const runs = metrics.counter({
      name: 'governance_audit_verification_runs_total',
      help: 'Audit chain verifications (every walk of a chain: on demand, for reports, before signing), by result',
      labelNames: ['result'],
    });
    this.verifiedValid = runs.labels('valid');
    this.verifiedInvalid = runs.labels('invalid');
    this.entriesPerSecond = metrics.gauge({
      name: 'governance_audit_verification_entries_per_second',
      help: 'Entries checked per second by the last audit chain verification that checked any',
    });
  }

  async list(organizationId: string, query: AuditQueryDto): Promise<Page<AuditEntryDto>> {
    const from = query.from ? new Date(query.from) : undefined;
    const to = query.to ? new Date(query.to) : undefined;
    if (from && to && from > to)
      throw AppError.validation('from must not be after to', [
        { field: 'from', message: 'from must not be after to' },
      ]);
    const page = pageRequest(query, { limit: 50, max: 200 });
    const { rows, total, capped } = await this.repo.list(
      organizationId,
      { from, to, eventType: query.eventType, userId: query.userId },
      page,
      LIST_COUNT_CAP,
    );
    return toPage(rows.map(toAuditEntryResponse), total, page, capped);
  }

  /** One resource's entries, oldest first (for resource histories shown to every role: callers pick the fields). */
  async entriesForTarget(
    organizationId: string,
    targetType: string,
    targetId: string,
    page: { limit: number; offset: number },
  ): Promise<{ rows: AuditEntryRow[]; total: number }> {
    return this.repo.listForTarget(organizationId, targetType, targetId, page);
  }

  /**
   * The audit entry that recorded a trace's ingestion, when it is one of `eventTypes` (`trace.auto_approved`, say):
   * what a trace's entry says outlives the trace's own content (erasure).
   */
  async traceIngestEntry(
    organizationId: string,
    trace: { id: string; createdAt: Date },
    eventTypes: readonly string[],
  ): Promise<AuditEntryRow | undefined> {
    return this.repo.traceEntry(organizationId, trace.id, eventTypes, trace.createdAt, TRACE_ENTRY_WINDOW_MS);
  }

  async findEntry(organizationId: string, id: string): Promise<AuditEntryRow | undefined> {
    return isObjectId(id) ? this.repo.findById(organizationId, id) : undefined;
  }

  async get(organizationId: string, id: string): Promise<AuditEntryDto> {
    const row = await this.findEntry(organizationId, id);
    if (!row) throw AppError.notFound('Audit entry');
    return toAuditEntryResponse(row);
  }

  /**
   * Verifies the chain: from the verified prefix of the last verification (its entry must still carry the hash
   * then verified), or from the first entry with `full`, up to the head. Also checks the chain against its highest
   * signed checkpoint (it must not end before it nor carry another hash there). A chain that holds moves the
   * verified prefix to its head. With `content`, also checks every trace's content against its latest recorded
   * content hash (a full pass, whatever `full` says), under the same limit of whole-chain reads.
   */
  async verify(
    organizationId: string,
    options: { full?: boolean; content?: boolean } = {},
  ): Promise<AuditVerifyDto> {
    const prefix = options.full ? undefined : await this.usablePrefix(organizationId);
    const walked = await this.walk(organizationId, prefix);
    const content = options.content ? await this.checkContent(organizationId) : {};
    if (walked.broken) {
      const bounds = await this.repo.bounds(organizationId);
      return {
        valid: false,
        totalEntries: bounds.total,
        firstEntry: bounds.first?.toISOString() ?? null,
        lastEntry: bounds.last?.toISOString() ?? null,
        verifiedFrom: walked.verifiedFrom,
        brokenAt: walked.broken,
        ...content,
      };
    }
    return {
      valid: true,
      totalEntries: walked.total,
      firstEntry: walked.firstEntry,
      lastEntry: walked.lastEntry,
      verifiedFrom: walked.verifiedFrom,
      ...content,
    };
  }

  /** One content check at a time per organization (a check asked while one runs shares its result). */
  private checkContent(organizationId: string): Promise<ContentCheckResult> {
    const running = this.contentChecks.get(organizationId);
    if (running) return running;
    const check = this.heavy(() => this.content.check(organizationId)).finally(() =>
      this.contentChecks.delete(organizationId),
    );
    this.contentChecks.set(organizationId, check);
    return check;
  }

  /** The chain verified from the verified prefix up to its head, and that head (what a checkpoint signs). */
  async chainHead(organizationId: string): Promise<{
    valid: boolean;
    brokenAt?: { sequence: number; reason: string };
    head: { sequence: number; hash: string } | null;
  }> {
    const walked = await this.walk(organizationId, await this.usablePrefix(organizationId));
    if (walked.broken) return { valid: false, brokenAt: walked.broken, head: null };
    return { valid: true, head: walked.headHash ? { sequence: walked.total, hash: walked.headHash } : null };
  }

  /**
   * The chain's state for reports: verified from the verified prefix while the last verification from the first
   * entry is at most `maxFullAgeMs` old, from the first entry otherwise. Says from which sequence this call verified
   * and when the chain was last verified in full.
   */
  async chainState(organizationId: string, maxFullAgeMs: number): Promise<ChainState> {
    const prefix = await this.usablePrefix(organizationId);
    const now = this.clock.now();
    const recent = prefix && now.getTime() - prefix.fullyVerifiedAt.getTime() <= maxFullAgeMs;
    const walked = await this.walk(organizationId, recent ? prefix : undefined);
    const bounds = walked.broken ? await this.repo.bounds(organizationId) : undefined;
    return {
      valid: !walked.broken,
      totalEntries: bounds ? bounds.total : walked.total,
      headHash: bounds ? bounds.headHash : walked.headHash,
      ...(walked.broken ? { brokenAt: walked.broken } : {}),
      verifiedFrom: walked.verifiedFrom,
      fullyVerifiedAt: recent ? prefix.fullyVerifiedAt : walked.broken ? null : now,
    };
  }

  /**
   * The prefix a verification may start after: none while a break is recorded (every verification then starts from
   * the first entry, until one passes) or before any verification passed.
   */
  private async usablePrefix(organizationId: string): Promise<AuditChainCheckpointRow | undefined> {
    const prefix = await this.repo.verifiedPrefix(organizationId);
    return prefix && prefix.brokenSequence === null && prefix.sequence > 0 ? prefix : undefined;
  }

  /**
   * One walk at a time per organization and starting point: a verification asked while the same one runs shares
   * its result; and at most WALKS_AT_ONCE walks (and exports) run in the process, the others waiting their turn.
   */
  private walk(
    organizationId: string,
    from: { sequence: number; hash: string } | undefined,
  ): Promise<Walked> {
    const key = `${organizationId}:${from ? `${from.sequence}:${from.hash}` : 'full'}`;
    const running = this.walks.get(key);
    if (running) return running;
    const walk = this.heavy(() => this.walkOnce(organizationId, from)).finally(() => this.walks.delete(key));
    this.walks.set(key, walk);
    return walk;
  }

  /** Runs a read of the whole chain under the process's limit. */
  private async heavy<T>(work: () => Promise<T>): Promise<T> {
    await this.acquireChainRead();
    try {
      return await work();
    } finally {
      this.chainReads.release();
    }
  }

  /** A place among the whole-chain reads; 503 when too many already wait for one. */
  private async acquireChainRead(): Promise<void> {
    try {
      await this.chainReads.acquire();
    } catch (err) {
      if (!(err instanceof SemaphoreFullError)) throw err;
      throw new AppError(
        503,
        ErrorCode.SERVICE_UNAVAILABLE,
        'Too many audit chain reads are waiting; try again shortly',
      );
    }
  }

  /**
   * The walk behind both, through the bulk reader: every entry after `from` (or from the first) up to the head read
   * at the start (entries appended meanwhile are the next walk's), each checked for its sequence, its link to the
   * previous hash and its own hash. On success the verified prefix moves to the head.
   */
  private async walkOnce(
    organizationId: string,
    from: { sequence: number; hash: string } | undefined,
  ): Promise<Walked> {
    const started = performance.now();
    const walked = await this.walkChain(organizationId, from);
    const seconds = (performance.now() - started) / 1000;
    if (walked.broken) await this.repo.recordBreak(organizationId, walked.broken, this.clock.now());
    (walked.broken ? this.verifiedInvalid : this.verifiedValid).inc();
    // The entries this walk checked: up to the head, or up to the break.
    const checked = walked.broken
      ? walked.broken.sequence - walked.verifiedFrom
      : walked.total - walked.verifiedFrom + 1;
    // A walk with nothing new to check says nothing of the speed.
    if (checked > 0 && seconds > 0) this.entriesPerSecond.set(checked / seconds);
    return walked;
  }

  private async walkChain(
    organizationId: string,
    from: { sequence: number; hash: string } | undefined,
  ): Promise<Walked> {
    const verifiedFrom = from ? from.sequence + 1 : 1;
    const broken = (sequence: number, id: string | null, reason: BrokenReason): Walked => ({
      total: 0,
      headHash: null,
      firstEntry: null,
      lastEntry: null,
      verifiedFrom,
      broken: { sequence, id, reason },
    });
    // The highest checkpoint before the head: a checkpoint signed in between is then below the head read.
    const highest = await this.repo.highestCheckpoint(organizationId);
    const head = await this.reader.head(organizationId);
    const headSequence = head ? Number(head[Col.Sequence]) : 0;
    // What was verified or signed before must still be there, with the same hash.
    for (const anchor of [from, highest]) {
      if (!anchor) continue;
      if (anchor.sequence > headSequence) return broken(anchor.sequence, null, 'truncated');
      const row =
        anchor.sequence === headSequence ? head! : await this.reader.at(organizationId, anchor.sequence);
      if (!row) return broken(anchor.sequence, null, 'sequence_gap');
      if (row[Col.Hash] !== anchor.hash) {
        return broken(
          anchor.sequence,
          row[Col.Id],
          anchor === from ? 'verified_prefix_mismatch' : 'checkpoint_mismatch',
        );
      }
    }
    if (!head) return { total: 0, headHash: null, firstEntry: null, lastEntry: null, verifiedFrom };
    let expected = verifiedFrom;
    let prevHash = from ? from.hash : GENESIS_HASH;
    const hasher = new ChainHasher(organizationId);
    for await (const rows of this.reader.pages(organizationId, expected - 1, headSequence)) {
      for (const row of rows) {
        const sequence = Number(row[Col.Sequence]);
        const reason: BrokenReason | undefined =
          sequence !== expected
            ? 'sequence_gap'
            : row[Col.PrevHash] !== prevHash
              ? 'prev_hash_mismatch'
              : row[Col.Hash] !== hasher.hash(row)
                ? 'hash_mismatch'
                : undefined;
        if (reason) return broken(sequence, row[Col.Id], reason);
        prevHash = row[Col.Hash]!;
        expected += 1;
      }
    }
    // A range that ended early: entries missing before the head.
    if (expected !== headSequence + 1) return broken(expected, null, 'sequence_gap');
    // The head read first must be the entry the pages ended on: what is saved and signed is what was checked.
    if (prevHash !== head[Col.Hash]) return broken(headSequence, head[Col.Id], 'hash_mismatch');
    await this.repo.saveVerifiedPrefix(
      organizationId,
      { sequence: headSequence, hash: prevHash },
      this.clock.now(),
      !from,
    );
    return {
      total: headSequence,
      headHash: prevHash,
      firstEntry: await this.firstCreatedAt(organizationId),
      lastEntry: head[Col.CreatedAt],
      verifiedFrom,
    };
  }

  private async firstCreatedAt(organizationId: string): Promise<string | null> {
    return (await this.reader.at(organizationId, 1))?.[Col.CreatedAt] ?? null;
  }

  /**
   * The chain as NDJSON, one entry per line in sequence order up to the head at the start, a page per chunk, under
   * the process's limit of whole-chain reads (held until the stream ends or is abandoned).
   */
  async exportNdjson(organizationId: string): Promise<Readable> {
    await this.acquireChainRead();
    const reader = this.reader;
    const stream = Readable.from(
      (async function* lines() {
        const head = await reader.head(organizationId);
        if (!head) return;
        for await (const rows of reader.pages(organizationId, 0, Number(head[Col.Sequence]))) {
          let chunk = '';
          for (const row of rows) chunk += exportLine(row, organizationId);
          yield chunk;
        }
      })(),
    );
    // 'close' follows the end, an error and an abandoned download alike (the stream is auto-destroyed).
    stream.once('close', () => this.chainReads.release());
    return stream;
  }
}

type BrokenReason =
  | 'sequence_gap'
  | 'prev_hash_mismatch'
  | 'hash_mismatch'
  | 'verified_prefix_mismatch'
  | 'checkpoint_mismatch'
  | 'truncated';

interface Walked {
  total: number;
  headHash: string | null;
  firstEntry: string | null;
  lastEntry: string | null;
  verifiedFrom: number;
  broken?: { sequence: number; id: string | null; reason: BrokenReason };
}
