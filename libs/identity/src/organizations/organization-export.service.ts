import { Injectable } from '@nestjs/common';
import { AppError, Clock, type Row, TransactionHost } from '#platform';
import { AUDIT_TABLE, type OrganizationTable } from './organization-data.js';
import { OrganizationDataRepository } from './organization-data.repository.js';

/** Rows read per query: memory stays bounded whatever the organization holds. */
export const EXPORT_PAGE = 500;
/** Traces carry up to megabytes of context each: fewer per query. */
const LARGE_ROW_PAGE = 50;
const LARGE_ROW_TABLES = new Set(['traces', 'domain_events', 'outbox_messages']);

/** One line of an export: a header first, then `{table, record}` lines, records as the database holds them. */
export type ExportLine =
  | { export: { organizationId: string; exportedAt: string; format: 1; tables: string[] } }
  | { table: string; record: Record<string, unknown> }
  | { end: ExportEnd };

/**
 * The last line: how many records of each table came, and the audit chain's length and head. A verifier that
 * finds it missing, or not matching the lines, knows the file was cut or lines were removed.
 */
export interface ExportEnd {
  records: Record<string, number>;
  audit: { entries: number; head: string | null };
}

/**
 * The organization export (`org:export`): every record of the organization, as NDJSON lines, read a
 * page at a time. The header names the tables; then the organization row, its members' user accounts (public
 * fields only: no password hash, MFA secret or preferences) and every table with an `organization_id` column
 * (from the catalogue, as erasure reads it), each in primary-key order, the audit log in sequence order so the
 * chain verifies line by line (`verifyExportedChain`). Records carry the database's column names; secrets are as
 * stored (hashes, sealed ciphertext). A last line (`end`) counts the records of each table and gives the chain's
 * length and head, so that a cut file or removed lines are found. Works on a deleted organization until it is
 * erased.
 *
 * The export is one snapshot: every read runs in one REPEATABLE READ, READ ONLY transaction, so rows committed
 * while a long export streams (a trace and its audit entry, a new member) are in none of its tables, and the end
 * line counts what the snapshot held.
 * See docs/compliance-officers.md, "Organization deletion" (its "Export");
 * test/organization-export-snapshot.e2e-spec.ts.
 */
@Injectable()
export class OrganizationExportService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly data: OrganizationDataRepository,
    private readonly clock: Clock,
  ) {}

  /** The export's lines, read as the consumer pulls them; the snapshot lasts until the last line is read. */
  lines(organizationId: string): AsyncGenerator<ExportLine> {
    return this.tx.snapshot(() => this.snapshotLines(organizationId));
  }

  private async *snapshotLines(organizationId: string): AsyncGenerator<ExportLine> {
    const organization = await this.data.organizationRecord(organizationId);
    if (!organization) throw AppError.notFound('Organization');
    const catalogue = await this.data.catalogue();
    const tables = catalogue.organizationTables;
    yield {
      export: {
        organizationId,
        exportedAt: this.clock.now().toISOString(),
        format: 1,
        tables: ['organizations', 'users', ...tables.map((t) => t.name)],
      },
    };
    const records: Record<string, number> = {};
    const audit: ExportEnd['audit'] = { entries: 0, head: null };
    const counted = async function* (lines: AsyncGenerator<ExportLine>): AsyncGenerator<ExportLine> {
      for await (const line of lines) {
        if ('table' in line) {
          records[line.table] = (records[line.table] ?? 0) + 1;
          if (line.table === AUDIT_TABLE) {
            audit.entries += 1;
            audit.head = String(line.record.hash);
          }
        }
        yield line;
      }
    };
    yield { table: 'organizations', record: organization };
    records.organizations = 1;
    yield* counted(this.memberUsers(organizationId));
    for (const table of tables) yield* counted(this.table(organizationId, table));
    yield { end: { records, audit } };
  }

  /** The accounts of the organization's members, without credentials, by id. */
  private async *memberUsers(organizationId: string): AsyncGenerator<ExportLine> {
    let after = '';
    for (;;) {
      const page = await this.data.memberUsersAfter(organizationId, after, EXPORT_PAGE);
      for (const row of page) {
        yield { table: 'users', record: { ...row, created_at: row.created_at.toISOString() } };
      }
      if (page.length < EXPORT_PAGE) return;
      after = page[page.length - 1]!.id;
    }
  }

  /** One table's rows of the organization, a page at a time by its key (the audit log by sequence). */
  private async *table(organizationId: string, table: OrganizationTable): AsyncGenerator<ExportLine> {
    const key = table.name === AUDIT_TABLE ? ['sequence'] : table.primaryKey;
    if (key.length === 0) {
      // No primary key to page by (none today): read in one go rather than leave the table out.
      for (const record of await this.data.tableRecords(organizationId, table.name)) {
        yield { table: table.name, record };
      }
      return;
    }
    const pageSize = LARGE_ROW_TABLES.has(table.name) ? LARGE_ROW_PAGE : EXPORT_PAGE;
    let after: Row | null = null;
    for (;;) {
      const page = await this.data.tablePage(organizationId, table.name, key, after, pageSize);
      for (const record of page.records) yield { table: table.name, record };
      if (!page.next) return;
      after = page.next;
    }
  }
}
