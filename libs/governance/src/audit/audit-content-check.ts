import { Injectable } from '@nestjs/common';
import { type ContentStatus, decideContent, type RecordedContent } from '../traces/trace-content.js';
import { type StoredTraceContent, TraceContentRepository } from '../traces/trace-content.repository.js';
import { TRACE_AUDIT_EVENTS } from '../traces/trace-events.js';
import { AuditChainReader, Col } from './audit-chain-reader.js';

/** At most this many altered traces are named in the result (`contentAlteredIds`); the count has them all. */
export const CONTENT_ALTERED_LISTED = 20;

/** Traces read per query, at most. */
const TRACE_BATCH = 500;

/**
 * And at most this much stored content per query (PostgreSQL's size of the content columns, often compressed): a
 * trace's content may be as large as the body limit, and two batches are in memory at once (the one being hashed and
 * the next, already requested). A trace larger than this is read alone.
 */
const BATCH_STORED_BYTES = 4 * 1024 * 1024;

/** What `GET /audit/verify?content=true` adds to the chain's verification. */
export interface ContentCheckResult {
  contentChecked: number;
  contentAltered: number;
  contentAlteredIds: string[];
  contentErased: number;
  contentUnhashed: number;
}

const INGESTION_EVENTS: ReadonlySet<string> = new Set(TRACE_AUDIT_EVENTS);

/**
 * Checks every trace's stored content against the content hash of its latest audit entry that records one
 * (`decideContent`). One pass over the chain from its head down, through the trace entries only: the first entry
 * met for a trace is its latest, so it decides the trace, whose content is then read by primary key in small batches.
 * Earlier entries of a trace decided by a later one (CPI feedback after ingestion) are skipped until the walk passes
 * the trace's first entry (its ingestion, `trace.*`); only those traces are remembered meanwhile, so memory holds a
 * page of entries, two batches of traces, and the traces whose feedback is above the walk and ingestion below it.
 *
 * A trace is counted once it is met through an entry: every trace the service stores has one, written in the same
 * transaction; a trace deleted since (retention) is not counted. Never incremental: the content can change at any
 * time, unlike the chain's verified prefix.
 */
@Injectable()
export class AuditContentCheck {
  constructor(
    private readonly reader: AuditChainReader,
    private readonly traces: TraceContentRepository,
  ) {}

  async check(organizationId: string): Promise<ContentCheckResult> {
    const result: ContentCheckResult = {
      contentChecked: 0,
      contentAltered: 0,
      contentAlteredIds: [],
      contentErased: 0,
      contentUnhashed: 0,
    };
    const head = await this.reader.head(organizationId);
    if (!head) return result;
    const headSequence = Number(head[Col.Sequence]);
    // Traces decided by an entry after their first, until the walk reaches that first entry.
    const decidedAbove = new Set<string>();
    for await (const rows of this.reader.traceEntriesDown(organizationId, headSequence)) {
      const hashed = new Map<string, RecordedContent>();
      const unhashed: string[] = [];
      for (const [, entryId, eventType, traceId, contentHash] of rows) {
        const first = INGESTION_EVENTS.has(eventType);
        if (decidedAbove.has(traceId)) {
          if (first) decidedAbove.delete(traceId);
          continue;
        }
        if (contentHash !== null) {
          if (hashed.has(traceId)) continue;
          hashed.set(traceId, { id: entryId, hash: contentHash });
          if (!first) decidedAbove.add(traceId);
        } else if (first) {
          // Its first entry, and no later one recorded a hash: stored before content hashing.
          unhashed.push(traceId);
        }
      }
      const altered = await this.checkHashed(organizationId, hashed, result);
      await this.recheck(organizationId, headSequence, altered, result);
      await this.checkUnhashed(organizationId, unhashed, result);
    }
    return result;
  }

  /** The traces with a recorded hash, in batches (one requested ahead); returns those found altered. */
  private async checkHashed(
    organizationId: string,
    hashed: Map<string, RecordedContent>,
    result: ContentCheckResult,
  ): Promise<string[]> {
    const altered: string[] = [];
    const groups = sizedGroups(await this.traces.storedSizes(organizationId, [...hashed.keys()]));
    for await (const rows of this.batches(groups, (ids) => this.traces.contentOf(organizationId, ids))) {
      for (const row of rows) {
        const status = decideContent(row, hashed.get(row.id)!);
        if (status === 'altered') altered.push(row.id);
        else this.count(result, row.id, status);
      }
    }
    return altered;
  }

  /**
   * An altered trace may have been changed, with a new entry, after the walk read the head: checked again against
   * the latest hash the entries since then record, if any. A trace still altered is counted so.
   */
  private async recheck(
    organizationId: string,
    headSequence: number,
    altered: string[],
    result: ContentCheckResult,
  ): Promise<void> {
    if (altered.length === 0) return;
    const later = await this.reader.laterContentHashes(organizationId, headSequence, altered);
    const rows = new Map<string, StoredTraceContent>();
    const groups = sizedGroups(await this.traces.storedSizes(organizationId, [...later.keys()]));
    for await (const batch of this.batches(groups, (ids) => this.traces.contentOf(organizationId, ids)))
      for (const row of batch) rows.set(row.id, row);
    for (const id of altered) {
      const recorded = later.get(id);
      const row = rows.get(id);
      if (!recorded) this.count(result, id, 'altered');
      // Deleted meanwhile (retention): no longer a trace to count.
      else if (row) this.count(result, id, decideContent(row, recorded));
    }
  }

  /** Traces whose entries record no hash: erased, unhashed or altered, their content not read. */
  private async checkUnhashed(
    organizationId: string,
    ids: string[],
    result: ContentCheckResult,
  ): Promise<void> {
    const groups: string[][] = [];
    for (let i = 0; i < ids.length; i += TRACE_BATCH) groups.push(ids.slice(i, i + TRACE_BATCH));
    for await (const rows of this.batches(groups, (part) => this.traces.erasedAtOf(organizationId, part))) {
      for (const row of rows) {
        // The chain records no hash: stored before content hashing, unless a salt or pointer says otherwise.
        const status = decideContent(
          { inputContext: null, outputDecision: null, metadata: null, rationale: null, ...row },
          null,
        );
        this.count(result, row.id, status);
      }
    }
  }

  private count(result: ContentCheckResult, id: string, status: ContentStatus): void {
    result.contentChecked += 1;
    if (status === 'altered') {
      result.contentAltered += 1;
      if (result.contentAlteredIds.length < CONTENT_ALTERED_LISTED) result.contentAlteredIds.push(id);
    } else if (status === 'erased') result.contentErased += 1;
    else if (status === 'unhashed') result.contentUnhashed += 1;
  }

  /** `read` of each group in turn, the next group requested while the caller works on the current one. */
  private async *batches<T>(groups: string[][], read: (ids: string[]) => Promise<T[]>): AsyncGenerator<T[]> {
    const request = (index: number) => {
      if (index >= groups.length) return null;
      const batch = read(groups[index]!);
      // Awaited below, unless the caller stops first: a failure then is nobody's to report.
      batch.catch(() => undefined);
      return batch;
    };
    let index = 0;
    let next = request(index);
    while (next) {
      const rows = await next;
      index += 1;
      next = request(index);
      yield rows;
    }
  }
}

/**
 * Traces (those that still exist, with their stored size) in groups of at most TRACE_BATCH traces and
 * BATCH_STORED_BYTES bytes, a larger trace alone.
 */
function sizedGroups(sized: { id: string; bytes: number }[]): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let bytes = 0;
  for (const trace of sized) {
    if (group.length > 0 && (group.length >= TRACE_BATCH || bytes + trace.bytes > BATCH_STORED_BYTES)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(trace.id);
    bytes += trace.bytes;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
