import { hash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, type DatabaseHandle } from '#platform';

/**
 * An audit entry as the bulk reads take it: every column as PostgreSQL's text, in this order, nothing parsed until
 * it is needed. `createdAt` is already the ISO-8601 form the hash covers (milliseconds, `Z`).
 */
export type ChainRow = (string | null)[];
export const Col = {
  Sequence: 0,
  Id: 1,
  EventType: 2,
  UserId: 3,
  Actor: 4,
  TargetType: 5,
  TargetId: 6,
  Metadata: 7,
  Ip: 8,
  UserAgent: 9,
  CreatedAt: 10,
  PrevHash: 11,
  Hash: 12,
} as const;

// Output names are aliases: `order by sequence` must sort the bigint column, not its text.
const COLUMNS = `sequence::text as seq, id, event_type, user_id, actor::text, target_type, target_id, metadata::text, ip,
  user_agent, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), prev_hash, hash`;

/** A range of one chain by sequence (keyset, through audit_entries_org_sequence_uq), in order. */
const RANGE_SQL = `select ${COLUMNS} from audit_entries
  where organization_id = $1 and sequence > $2::bigint and sequence <= $3::bigint order by audit_entries.sequence`;

/** One entry of a chain by its sequence. */
const AT_SQL = `select ${COLUMNS} from audit_entries where organization_id = $1 and sequence = $2::bigint`;

/** The chain's last entry. */
const HEAD_SQL = `select ${COLUMNS} from audit_entries where organization_id = $1
  order by audit_entries.sequence desc limit 1`;

/** Entries per page: two pages in memory at most (the one being checked and the next, already requested). */
export const CHAIN_PAGE = 5000;

/**
 * A trace's audit entry as the content check reads it: sequence, id, event type, the trace's id and the content hash
 * the entry records (`metadata.contentHash` as text; null when it records none).
 */
export type TraceEntryRow = [
  sequence: string,
  id: string,
  eventType: string,
  traceId: string,
  contentHash: string | null,
];

/**
 * A range of one chain's trace entries, newest first (the content check walks down: a trace's first entry met is its
 * latest). Through audit_entries_org_sequence_uq: trace entries have no index of their own by target (ingestion pays
 * nothing for one), so a range of sequences is read and the other entries filtered out.
 */
const TRACE_RANGE_SQL = `select sequence::text as seq, id, event_type, target_id, metadata->>'contentHash' from audit_entries
  where organization_id = $1 and sequence > $2::bigint and sequence <= $3::bigint and target_type = 'trace'
    and target_id is not null
  order by audit_entries.sequence desc`;

/** The latest content hash that entries after a sequence record for each of some traces. */
const LATER_HASHES_SQL = `select distinct on (target_id) target_id, id, metadata->>'contentHash' from audit_entries
  where organization_id = $1 and sequence > $2::bigint and target_type = 'trace' and target_id = any($3::text[])
    and metadata ? 'contentHash'
  order by target_id, audit_entries.sequence desc`;

/** Sequences per page of the content check's walk (only trace entries are returned, four short columns each). */
export const TRACE_ENTRY_PAGE = 10_000;

const quote = (value: string | null): string => (value === null ? 'null' : JSON.stringify(value));

/**
 * RFC 8785 canonical JSON of a value that JSON.parse produced (no undefined, no toJSON, no cycles): keys sorted by
 * UTF-16 code units, numbers and strings as ECMAScript serialises them. A non-finite number cannot come from JSON.
 */
export function canonicalParsed(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalParsed(value[i]);
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    out += (i === 0 ? '' : ',') + JSON.stringify(key) + ':' + canonicalParsed(record[key]);
  }
  return out + '}';
}

/**
 * Canonical JSON of a jsonb column's text. Its numbers must be the values JavaScript wrote: a literal that is not
 * exactly the decimal of the double it parses to (9007199254740993, 0.10000000000000000001: an edit in the
 * database) would hash as that double and pass, while other readers see another number; it is refused (throws).
 */
function canonicalText(text: string | null): string {
  if (text === null) return 'null';
  if (!numbersExact(text)) throw new Error('A number is not the value that was hashed');
  return canonicalParsed(JSON.parse(text));
}

/** Whether every number literal of a JSON text (outside strings) is exactly the decimal of its double. */
export function numbersExact(text: string): boolean {
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote, over escapes.
      for (i++; i < length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < length) {
        const d = text.charCodeAt(end);
        if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d)
          end++;
        else break;
      }
      const literal = text.slice(i, end);
      const value = Number(literal);
      if (!Number.isFinite(value) || !sameDecimal(literal, String(value))) return false;
      i = end - 1;
    }
  }
  return true;
}

/** Whether two decimal literals (JSON number syntax) denote the same value exactly. */
function sameDecimal(a: string, b: string): boolean {
  const x = decimalOf(a);
  const y = decimalOf(b);
  return x.digits === y.digits && x.exponent === y.exponent && x.negative === y.negative;
}

/** A decimal literal as sign, significant digits (no leading or trailing zeros) and the exponent of the last one. */
function decimalOf(literal: string): { negative: boolean; digits: string; exponent: number } {
  const negative = literal.startsWith('-');
  const body = negative ? literal.slice(1) : literal;
  const e = body.search(/[eE]/);
  const mantissa = e === -1 ? body : body.slice(0, e);
  const dot = mantissa.indexOf('.');
  const whole = dot === -1 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  const leading = whole.replace(/^0+/, '');
  const digits = leading.replace(/0+$/, '');
  const exponent =
    (e === -1 ? 0 : Number(body.slice(e + 1))) -
    (dot === -1 ? 0 : mantissa.length - dot - 1) +
    (leading.length - digits.length);
  // Zero has no sign and no exponent.
  return digits === '' ? { negative: false, digits: '0', exponent: 0 } : { negative, digits, exponent };
}

/** Actors repeat (an agent writes most of a chain): their canonical form is kept, up to this many. */
const ACTOR_CACHE_MAX = 1024;

/**
 * Computes entries' hashes from their rows: SHA-256 of `prevHash + "\n" + RFC 8785 canonical JSON of the entry
 * without id, prevHash and hash` (docs/compliance-officers.md, "Audit log"). The canonical text is written straight
 * from the columns in the canonical key order (actor, createdAt, eventType, ip, metadata, organizationId, sequence,
 * targetId, targetType, userAgent, userId), so only actor and metadata are parsed and re-serialised. One instance per
 * walk (its actor cache is bounded).
 */
export class ChainHasher {
  private readonly actors = new Map<string, string>();
  private readonly organization: string;

  constructor(organizationId: string) {
    this.organization = quote(organizationId);
  }

  /** The canonical bytes' text of an entry (what `chainHash` hashes after `prevHash + "\n"`). */
  canonical(row: ChainRow): string {
    return (
      `{"actor":${this.actor(row[Col.Actor]!)},"createdAt":"${row[Col.CreatedAt]}",` +
      `"eventType":${quote(row[Col.EventType])},"ip":${quote(row[Col.Ip])},` +
      `"metadata":${canonicalText(row[Col.Metadata])},"organizationId":${this.organization},` +
      `"sequence":${row[Col.Sequence]},"targetId":${quote(row[Col.TargetId])},` +
      `"targetType":${quote(row[Col.TargetType])},"userAgent":${quote(row[Col.UserAgent])},` +
      `"userId":${quote(row[Col.UserId])}}`
    );
  }

  /** The entry's hash recomputed from its stored prevHash and content; null when the row cannot be read as JSON. */
  hash(row: ChainRow): string | null {
    let text: string;
    try {
      text = this.canonical(row);
    } catch {
      return null;
    }
    return hash('sha256', `${row[Col.PrevHash]}\n${text}`);
  }

  private actor(text: string): string {
    let canonical = this.actors.get(text);
    if (canonical === undefined) {
      canonical = canonicalText(text);
      if (this.actors.size >= ACTOR_CACHE_MAX) this.actors.clear();
      this.actors.set(text, canonical);
    }
    return canonical;
  }
}

/**
 * The audit chains' bulk reader for verification and export: rows as text (no Date, no JSON parsed by the driver),
 * in sequence ranges requested one page ahead, so that the database prepares the next page while this process
 * checks the current one. Memory holds two pages whatever the chain's length.
 */
@Injectable()
export class AuditChainReader {
  constructor(@Inject(DATABASE) private readonly handle: DatabaseHandle) {}

  async head(organizationId: string): Promise<ChainRow | undefined> {
    const [row] = await this.handle.textRows(HEAD_SQL, [organizationId]);
    return row;
  }

  async at(organizationId: string, sequence: number): Promise<ChainRow | undefined> {
    const [row] = await this.handle.textRows(AT_SQL, [organizationId, sequence]);
    return row;
  }

  /** Pages of the entries with `after < sequence <= upTo`, in order. */
  async *pages(
    organizationId: string,
    after: number,
    upTo: number,
    size = CHAIN_PAGE,
  ): AsyncGenerator<ChainRow[]> {
    const request = (from: number) => {
      if (from >= upTo) return null;
      const page = this.handle.textRows(RANGE_SQL, [organizationId, from, Math.min(from + size, upTo)]);
      // Awaited below, unless the reader stops first: a failure then is nobody's to report.
      page.catch(() => undefined);
      return page;
    };
    let from = after;
    let next = request(from);
    while (next) {
      const rows = await next;
      from = Math.min(from + size, upTo);
      next = request(from);
      yield rows;
    }
  }

  /**
   * Pages of the trace entries with `sequence <= upTo`, from the head down (newest first within and across pages),
   * the next page requested while the caller works on the current one.
   */
  async *traceEntriesDown(
    organizationId: string,
    upTo: number,
    size = TRACE_ENTRY_PAGE,
  ): AsyncGenerator<TraceEntryRow[]> {
    const request = (to: number) => {
      if (to <= 0) return null;
      const page = this.handle.textRows(TRACE_RANGE_SQL, [organizationId, Math.max(0, to - size), to]);
      page.catch(() => undefined);
      return page as Promise<TraceEntryRow[]>;
    };
    let to = upTo;
    let next = request(to);
    while (next) {
      const rows = await next;
      to = Math.max(0, to - size);
      next = request(to);
      yield rows;
    }
  }

  /**
   * The latest entry that records a content hash for each of `traceIds` among the entries after `after` (those
   * appended since a walk read its head: a range of the sequence index, short): its id and hash. Traces without such
   * an entry are absent.
   */
  async laterContentHashes(
    organizationId: string,
    after: number,
    traceIds: readonly string[],
  ): Promise<Map<string, { id: string; hash: string }>> {
    if (traceIds.length === 0) return new Map();
    const list = `{${traceIds.map((id) => `"${id.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
    const rows = await this.handle.textRows(LATER_HASHES_SQL, [organizationId, after, list]);
    return new Map(rows.map(([traceId, id, hash]) => [traceId!, { id: id!, hash: hash! }]));
  }
}

/**
 * One export line: the entry as the API shows it (`AuditEntryDto`), jsonb columns as PostgreSQL wrote them. Every
 * text column is quoted, the hashes too: a row altered in the database still gives a line of JSON.
 */
export function exportLine(row: ChainRow, organizationId: string): string {
  return (
    `{"id":${quote(row[Col.Id])},"sequence":${row[Col.Sequence]},"organizationId":${quote(organizationId)},` +
    `"eventType":${quote(row[Col.EventType])},"userId":${quote(row[Col.UserId])},"actor":${row[Col.Actor]},` +
    `"targetType":${quote(row[Col.TargetType])},"targetId":${quote(row[Col.TargetId])},` +
    `"metadata":${row[Col.Metadata]},"ip":${quote(row[Col.Ip])},"userAgent":${quote(row[Col.UserAgent])},` +
    `"createdAt":"${row[Col.CreatedAt]}","prevHash":${quote(row[Col.PrevHash])},"hash":${quote(row[Col.Hash])}}\n`
  );
}
