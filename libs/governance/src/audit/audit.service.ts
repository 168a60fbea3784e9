import { Injectable } from '@nestjs/common';
import {
  AppError,
  type AuditEntryRow,
  chainHash,
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

const VERIFY_BATCH = 1000;

/** The audit log's read side: list, one entry, verification, export. The platform's AuditLog writes the entries. */
@Injectable()
export class AuditService {
  constructor(private readonly repo: AuditRepository) {}

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
    const { headHash: _head, ...result } = await this.chainState(organizationId);
    return result;
  }

  /** The verification and the hash of the chain's last entry (the compliance report prints both). */
  async chainState(organizationId: string): Promise<AuditVerifyDto & { headHash: string | null }> {
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
          headHash: bounds.headHash,
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
      headHash: last?.hash ?? null,
    };
  }

  /** The chain as NDJSON lines, one entry each, for offline verification. */
  async *exportNdjson(organizationId: string): AsyncGenerator<string> {
    for await (const row of this.entries(organizationId)) {
      yield JSON.stringify(toAuditEntryResponse(row)) + '\n';
    }
  }
}
