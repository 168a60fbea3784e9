import { chainHash, GENESIS_HASH } from './audit-hash.js';
import type { AuditActor } from './audit.schema.js';

/** The table whose records form the chain in an organization export (`org:export`). */
export const EXPORTED_AUDIT_TABLE = 'audit_entries';

export interface ExportedChainResult {
  valid: boolean;
  /** Audit entries read. */
  entries: number;
  organizationId: string | null;
  /** The last entry's hash (the chain head), null without entries. */
  head: string | null;
  /** The first break: its line (1-based), the sequence there, and why. */
  brokenAt?: { line: number; sequence: number | null; reason: string };
}

/**
 * Verifies, line by line, the audit chain inside an organization export (NDJSON of `{table, record}` lines, the
 * records with the database's column names, the audit entries in sequence order), with the rules the service
 * applies (`chainHash`, `GENESIS_HASH`): sequences 1, 2, 3 … without gaps, each `prev_hash` the previous entry's
 * `hash` (the first one 64 zeros), each `hash` recomputed from the entry, one organization (the header's). The end
 * line must match what came: the chain's length and head, and each table's count, so a cut file or removed lines
 * are found. Needs nothing but the file: no database, no key. A line that is not JSON breaks the chain.
 */
export class ExportedChainVerifier {
  private line = 0;
  private entries = 0;
  private previous = GENESIS_HASH;
  private organizationId: string | null = null;
  /** The header's organization, when the file has a header. */
  private exportedOrganization: string | null = null;
  private readonly records = new Map<string, number>();
  private ended = false;
  private broken: ExportedChainResult['brokenAt'];

  push(text: string): void {
    this.line += 1;
    if (this.broken || text.trim() === '') return;
    if (this.ended) return this.fail(null, 'a line after the end line');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.fail(null, 'line is not JSON');
    }
    const {
      table,
      record,
      end,
      export: header,
    } = (parsed ?? {}) as {
      table?: unknown;
      record?: Record<string, unknown>;
      end?: { records?: Record<string, unknown>; audit?: { entries?: unknown; head?: unknown } };
      export?: { organizationId?: unknown };
    };
    if (header && typeof header === 'object' && typeof header.organizationId === 'string') {
      this.exportedOrganization = header.organizationId;
      return;
    }
    if (end && typeof end === 'object') return this.end(end);
    if (typeof table === 'string') this.records.set(table, (this.records.get(table) ?? 0) + 1);
    if (table !== EXPORTED_AUDIT_TABLE) return;
    if (!record || typeof record !== 'object') return this.fail(null, 'audit line without a record');
    const sequence = Number(record.sequence);
    const expected = this.entries + 1;
    if (sequence !== expected) return this.fail(sequence, `expected sequence ${expected}`);
    const organizationId = String(record.organization_id);
    const expectedOrganization = this.organizationId ?? this.exportedOrganization;
    if (expectedOrganization !== null && organizationId !== expectedOrganization) {
      return this.fail(sequence, 'entry of another organization');
    }
    if (record.prev_hash !== this.previous) return this.fail(sequence, 'prev_hash is not the previous hash');
    const createdAt = new Date(String(record.created_at));
    if (Number.isNaN(createdAt.getTime())) return this.fail(sequence, 'created_at is not a date');
    const hash = chainHash(this.previous, {
      sequence,
      organizationId,
      eventType: String(record.event_type),
      userId: (record.user_id as string | null) ?? null,
      actor: record.actor as AuditActor,
      targetType: (record.target_type as string | null) ?? null,
      targetId: (record.target_id as string | null) ?? null,
      metadata: (record.metadata as Record<string, unknown>) ?? {},
      ip: (record.ip as string | null) ?? null,
      userAgent: (record.user_agent as string | null) ?? null,
      createdAt,
    });
    if (hash !== record.hash) return this.fail(sequence, 'hash does not match the entry');
    this.organizationId = organizationId;
    this.previous = hash;
    this.entries = expected;
  }

  /** The end line: every count it gives must be what the lines held, and the chain's length and head too. */
  private end(end: {
    records?: Record<string, unknown>;
    audit?: { entries?: unknown; head?: unknown };
  }): void {
    this.ended = true;
    if (
      end.audit?.entries !== this.entries ||
      end.audit?.head !== (this.entries > 0 ? this.previous : null)
    ) {
      return this.fail(null, 'the end line does not match the audit chain (entries removed or the file cut)');
    }
    const counts = end.records ?? {};
    const tables = new Set([...Object.keys(counts), ...this.records.keys()]);
    for (const table of tables) {
      if ((this.records.get(table) ?? 0) !== counts[table]) {
        return this.fail(null, `the end line counts other records of ${table} than the file holds`);
      }
    }
  }

  /**
   * The verdict. A file with a header must end with its end line (else it was cut); a bare list of lines (no
   * header) is checked as a chain alone.
   */
  result(): ExportedChainResult {
    if (!this.broken && this.exportedOrganization !== null && !this.ended) {
      this.fail(null, 'no end line: the export is cut short');
    }
    return {
      valid: !this.broken,
      entries: this.entries,
      organizationId: this.organizationId,
      head: this.entries > 0 ? this.previous : null,
      ...(this.broken ? { brokenAt: this.broken } : {}),
    };
  }

  private fail(sequence: number | null, reason: string): void {
    this.broken = { line: this.line, sequence, reason };
  }
}

/** Verifies the audit chain of an export's lines (see `ExportedChainVerifier`, which reads a file as a stream). */
export function verifyExportedChain(lines: Iterable<string>): ExportedChainResult {
  const verifier = new ExportedChainVerifier();
  for (const line of lines) verifier.push(line);
  return verifier.result();
}
