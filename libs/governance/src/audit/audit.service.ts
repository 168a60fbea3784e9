import { Injectable } from '@nestjs/common';
import {
  AppError,
  type AuditEntryRow,
  Clock,
  GENESIS_HASH,
  isObjectId,
  type Page,
  pageRequest,
  toPage,
} from '#platform';
import { AuditChainReader, ChainHasher, Col, exportLine } from './audit-chain-reader.js';
import { AuditRepository } from './audit.repository.js';
import {
  type AuditEntryDto,
  type AuditQueryDto,
  type AuditVerifyDto,
  toAuditEntryResponse,
} from './dto/audit.dto.js';

/** Filtered lists count at most this many matches (beyond the page asked for); `pagination.totalCapped` says so. */
export const LIST_COUNT_CAP = 10_000;

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
  constructor(
    private readonly repo: AuditRepository,
    private readonly reader: AuditChainReader,
    private readonly clock: Clock,
  ) {}

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
   * verified prefix to its head.
   */
  async verify(organizationId: string, options: { full?: boolean } = {}): Promise<AuditVerifyDto> {
    const prefix = options.full ? undefined : await this.repo.verifiedPrefix(organizationId);
    const walked = await this.walk(organizationId, prefix);
    if (walked.broken) {
      const bounds = await this.repo.bounds(organizationId);
      return {
        valid: false,
        totalEntries: bounds.total,
        firstEntry: bounds.first?.toISOString() ?? null,
        lastEntry: bounds.last?.toISOString() ?? null,
        verifiedFrom: walked.verifiedFrom,
        brokenAt: walked.broken,
      };
    }
    return {
      valid: true,
      totalEntries: walked.total,
      firstEntry: walked.firstEntry,
      lastEntry: walked.lastEntry,
      verifiedFrom: walked.verifiedFrom,
    };
  }

  /** The chain verified from the verified prefix up to its head, and that head (what a checkpoint signs). */
  async chainHead(organizationId: string): Promise<{
    valid: boolean;
    brokenAt?: { sequence: number; reason: string };
    head: { sequence: number; hash: string } | null;
  }> {
    const walked = await this.walk(organizationId, await this.repo.verifiedPrefix(organizationId));
    if (walked.broken) return { valid: false, brokenAt: walked.broken, head: null };
    return { valid: true, head: walked.headHash ? { sequence: walked.total, hash: walked.headHash } : null };
  }

  /**
   * The chain's state for reports: verified from the verified prefix while the last verification from the first
   * entry is at most `maxFullAgeMs` old, from the first entry otherwise. Says from which sequence this call verified
   * and when the chain was last verified in full.
   */
  async chainState(organizationId: string, maxFullAgeMs: number): Promise<ChainState> {
    const prefix = await this.repo.verifiedPrefix(organizationId);
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
   * The walk behind both, through the bulk reader: every entry after `from` (or from the first) up to the head read
   * at the start (entries appended meanwhile are the next walk's), each checked for its sequence, its link to the
   * previous hash and its own hash. On success the verified prefix moves to the head.
   */
  private async walk(
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
    const [head, highest] = await Promise.all([
      this.reader.head(organizationId),
      this.repo.highestCheckpoint(organizationId),
    ]);
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
    await this.repo.saveVerifiedPrefix(
      organizationId,
      { sequence: headSequence, hash: head[Col.Hash]! },
      this.clock.now(),
      !from,
    );
    return {
      total: headSequence,
      headHash: head[Col.Hash]!,
      firstEntry: await this.firstCreatedAt(organizationId),
      lastEntry: head[Col.CreatedAt],
      verifiedFrom,
    };
  }

  private async firstCreatedAt(organizationId: string): Promise<string | null> {
    return (await this.reader.at(organizationId, 1))?.[Col.CreatedAt] ?? null;
  }

  /** The chain as NDJSON, one entry per line in sequence order up to the head at the start, a page per chunk. */
  async *exportNdjson(organizationId: string): AsyncGenerator<string> {
    const head = await this.reader.head(organizationId);
    if (!head) return;
    for await (const rows of this.reader.pages(organizationId, 0, Number(head[Col.Sequence]))) {
      let chunk = '';
      for (const row of rows) chunk += exportLine(row, organizationId);
      yield chunk;
    }
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
