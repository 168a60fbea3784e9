import { Injectable } from '@nestjs/common';
import {
  AppError,
  type AuditEntryRow,
  chainHash,
  Clock,
  GENESIS_HASH,
  isObjectId,
  type Page,
  pageRequest,
  toPage,
} from '#platform';
import { AuditRepository } from './audit.repository.js';
import {
  type AuditEntryDto,
  type AuditQueryDto,
  type AuditVerifyDto,
  toAuditEntryResponse,
} from './dto/audit.dto.js';

const VERIFY_BATCH = 5000;

/** The chain as a report shows it (`chainState`). */
export interface ChainState {
  valid: boolean;
  totalEntries: number;
  headHash: string | null;
  brokenAt?: { sequence: number; id: string; reason: string };
  /** The first sequence this verification read: 1, or the checkpoint's entry. */
  verifiedFrom: number;
  /** When a verification from the first entry last passed; null when the chain is broken and none is recent. */
  fullyVerifiedAt: Date | null;
}

/** The audit log's read side: list, one entry, verification, export. The platform's AuditLog writes the entries. */
@Injectable()
export class AuditService {
  constructor(
    private readonly repo: AuditRepository,
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
    const { rows, total } = await this.repo.list(
      organizationId,
      { from, to, eventType: query.eventType, userId: query.userId },
      page,
    );
    return toPage(rows.map(toAuditEntryResponse), total, page);
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

  /** Entries of the chain in order after `after`, read in batches so memory does not grow with the log. */
  async *entries(organizationId: string, after = 0): AsyncGenerator<AuditEntryRow> {
    for (;;) {
      const batch = await this.repo.batch(organizationId, after, VERIFY_BATCH);
      for (const row of batch) yield row;
      if (batch.length < VERIFY_BATCH) return;
      after = batch[batch.length - 1]!.sequence;
    }
  }

  /**
   * Recomputes every link of the chain from its first entry; reports the first entry that breaks it. A chain that
   * holds becomes the organization's checkpoint (`chainState` verifies from there).
   */
  async verify(organizationId: string): Promise<AuditVerifyDto> {
    const walked = await this.walk(organizationId, undefined);
    if (walked.broken) {
      const bounds = await this.repo.bounds(organizationId);
      return {
        valid: false,
        totalEntries: bounds.total,
        firstEntry: bounds.first?.toISOString() ?? null,
        lastEntry: bounds.last?.toISOString() ?? null,
        brokenAt: walked.broken,
      };
    }
    return {
      valid: true,
      totalEntries: walked.total,
      firstEntry: walked.first?.createdAt.toISOString() ?? null,
      lastEntry: walked.last?.createdAt.toISOString() ?? null,
    };
  }

  /**
   * The chain's state for reports: verified from the checkpoint of the last verification while the last one from the
   * first entry is at most `maxFullAgeMs` old (the checkpoint's own entry must still carry its hash, and every later
   * entry must link), from the first entry otherwise. Either way the checkpoint moves to the head when the chain
   * holds. Says from which sequence this call verified and when the chain was last verified in full.
   */
  async chainState(organizationId: string, maxFullAgeMs: number): Promise<ChainState> {
    const checkpoint = await this.repo.checkpoint(organizationId);
    const now = this.clock.now();
    const recent = checkpoint && now.getTime() - checkpoint.fullyVerifiedAt.getTime() <= maxFullAgeMs;
    const walked = await this.walk(organizationId, recent ? checkpoint : undefined);
    const bounds = walked.broken ? await this.repo.bounds(organizationId) : undefined;
    return {
      valid: !walked.broken,
      totalEntries: bounds ? bounds.total : walked.total,
      headHash: bounds ? bounds.headHash : walked.headHash,
      ...(walked.broken ? { brokenAt: walked.broken } : {}),
      verifiedFrom: recent ? checkpoint.sequence : 1,
      fullyVerifiedAt: recent ? checkpoint.fullyVerifiedAt : walked.broken ? null : now,
    };
  }

  /** The walk behind both: from the first entry, or from a checkpoint whose entry must still carry its hash. */
  private async walk(
    organizationId: string,
    from: { sequence: number; hash: string } | undefined,
  ): Promise<{
    total: number;
    headHash: string | null;
    first?: AuditEntryRow;
    last?: AuditEntryRow;
    broken?: { sequence: number; id: string; reason: string };
  }> {
    let expectedSequence = 1;
    let prevHash = GENESIS_HASH;
    if (from) {
      const [anchor] = await this.repo.batch(organizationId, from.sequence - 1, 1);
      if (!anchor || anchor.sequence !== from.sequence || anchor.hash !== from.hash) {
        return {
          total: 0,
          headHash: null,
          broken: { sequence: from.sequence, id: anchor?.id ?? '', reason: 'checkpoint_mismatch' },
        };
      }
      expectedSequence = from.sequence + 1;
      prevHash = from.hash;
    }
    let first: AuditEntryRow | undefined;
    let last: AuditEntryRow | undefined;
    for await (const row of this.entries(organizationId, expectedSequence - 1)) {
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
        return { total: 0, headHash: null, broken: { sequence: row.sequence, id: row.id, reason } };
      }
      last = row;
      prevHash = row.hash;
      expectedSequence += 1;
    }
    const head = last ?? (from ? { sequence: from.sequence, hash: from.hash } : undefined);
    if (head) await this.repo.saveCheckpoint(organizationId, head, this.clock.now(), !from);
    return { total: expectedSequence - 1, headHash: head?.hash ?? null, first, last };
  }

  /** The chain as NDJSON lines, one entry each, for offline verification. */
  async *exportNdjson(organizationId: string): AsyncGenerator<string> {
    for await (const row of this.entries(organizationId)) {
      yield JSON.stringify(toAuditEntryResponse(row)) + '\n';
    }
  }
}
