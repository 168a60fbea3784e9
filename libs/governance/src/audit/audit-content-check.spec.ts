import { describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '#platform';
import { contentHashOf, newContentSalt } from '../traces/trace-content.js';
import type { StoredTraceContent, TraceContentRepository } from '../traces/trace-content.repository.js';
import { AuditChainReader, type TraceEntryRow } from './audit-chain-reader.js';
import { AuditContentCheck, CONTENT_ALTERED_LISTED } from './audit-content-check.js';

const ORG = '66b000000000000000000001';

interface LogEntry {
  sequence: number;
  id: string;
  eventType: string;
  targetType: string;
  targetId: string;
  contentHash: string | null;
}

/**
 * An organization's audit log and traces in memory, behind the reader's SQL (recognised by its text) and the
 * traces' repository: the check's walk, its pages and its re-check run as they do against a database.
 */
class World {
  readonly log: LogEntry[] = [];
  readonly traces = new Map<string, StoredTraceContent>();
  /** Called before each read of traces' content (a change committed while the walk runs). */
  beforeRead: (ids: readonly string[]) => void = () => undefined;
  /** The size of each read of traces' content. */
  readonly reads: number[] = [];

  /** Appends an entry; returns its id. */
  append(eventType: string, traceId: string, contentHash: string | null, targetType = 'trace'): string {
    const sequence = this.log.length + 1;
    const id = `e${String(sequence).padStart(23, '0')}`;
    this.log.push({ sequence, id, eventType, targetType, targetId: traceId, contentHash });
    return id;
  }

  /** A trace stored with its content salt, its ingestion entry recording its hash. */
  ingest(id: string, text: string): StoredTraceContent {
    const trace: StoredTraceContent = {
      id,
      inputContext: { prompt: `About ${id}` },
      outputDecision: { action: 'refund', text },
      metadata: { n: 1 },
      rationale: null,
      contentSalt: newContentSalt(),
      contentEntryId: null,
      erasedAt: null,
    };
    this.traces.set(id, trace);
    trace.contentEntryId = this.append('trace.approved', id, contentHashOf(trace.contentSalt!, trace));
    return trace;
  }

  /** Feedback: the content changes and a cpi entry records its new hash. */
  correct(id: string, text: string): void {
    const trace = this.traces.get(id)!;
    trace.outputDecision = { ...trace.outputDecision, text, decision: 'deny' };
    trace.contentEntryId = this.append('cpi.corrected', id, contentHashOf(trace.contentSalt!, trace));
  }

  readonly handle = {
    textRows: async (text: string, params: readonly (string | number)[]) => {
      expect(params[0]).toBe(ORG);
      if (text.includes('limit 1')) {
        const head = this.log.at(-1);
        return head ? [[String(head.sequence)]] : [];
      }
      if (text.includes('distinct on (target_id)')) {
        const after = Number(params[1]);
        const ids = String(params[2])
          .slice(1, -1)
          .split(',')
          .map((q) => JSON.parse(q) as string);
        const latest = new Map<string, LogEntry>();
        for (const e of this.log) {
          if (e.sequence > after && e.targetType === 'trace' && ids.includes(e.targetId) && e.contentHash)
            latest.set(e.targetId, e);
        }
        return [...latest.values()].map((e) => [e.targetId, e.id, e.contentHash]);
      }
      const [, from, to] = params.map(Number);
      return this.log
        .filter((e) => e.sequence > from! && e.sequence <= to! && e.targetType === 'trace')
        .reverse()
        .map((e): TraceEntryRow => [String(e.sequence), e.id, e.eventType, e.targetId, e.contentHash]);
    },
  } as unknown as DatabaseHandle;

  readonly repository = {
    storedSizes: async (organizationId: string, ids: readonly string[]) => {
      expect(organizationId).toBe(ORG);
      return ids.flatMap((id) => {
        const t = this.traces.get(id);
        const bytes = t
          ? JSON.stringify([t.inputContext, t.outputDecision, t.metadata, t.rationale]).length
          : 0;
        return t ? [{ id, bytes }] : [];
      });
    },
    contentOf: async (organizationId: string, ids: readonly string[]) => {
      expect(organizationId).toBe(ORG);
      expect(ids.length).toBeLessThanOrEqual(500);
      this.reads.push(ids.length);
      this.beforeRead(ids);
      return ids.flatMap((id) => (this.traces.has(id) ? [structuredClone(this.traces.get(id)!)] : []));
    },
    erasedAtOf: async (organizationId: string, ids: readonly string[]) => {
      expect(organizationId).toBe(ORG);
      return ids.flatMap((id) => {
        const t = this.traces.get(id);
        return t
          ? [{ id, erasedAt: t.erasedAt, contentSalt: t.contentSalt, contentEntryId: t.contentEntryId }]
          : [];
      });
    },
  } as unknown as TraceContentRepository;

  /** The check, reading the log `pageSize` sequences at a time. */
  check(pageSize = 3) {
    class SmallPages extends AuditChainReader {
      override traceEntriesDown(organizationId: string, upTo: number) {
        return super.traceEntriesDown(organizationId, upTo, pageSize);
      }
    }
    return new AuditContentCheck(new SmallPages(this.handle), this.repository).check(ORG);
  }
}

const id = (n: number) => `66b0000000000000000${String(n).padStart(5, '0')}`;

describe('AuditContentCheck', () => {
  it('reports nothing for an organization without entries', async () => {
    expect(await new World().check()).toEqual({
      contentChecked: 0,
      contentAltered: 0,
      contentAlteredIds: [],
      contentErased: 0,
      contentUnhashed: 0,
    });
  });

  it('checks each trace against its latest hash, the feedback pages above its ingestion', async () => {
    for (const size of [1, 2, 3, 5, 100]) {
      const w = new World();
      w.ingest(id(1), 'kept');
      w.ingest(id(2), 'corrected later');
      w.ingest(id(3), 'corrected twice');
      w.append('policy.updated', 'not-a-trace', null, 'policy');
      w.correct(id(2), 'after feedback');
      w.correct(id(3), 'first feedback');
      w.ingest(id(4), 'after the others');
      w.correct(id(3), 'second feedback');
      expect(await w.check(size), `pages of ${size}`).toEqual({
        contentChecked: 4,
        contentAltered: 0,
        contentAlteredIds: [],
        contentErased: 0,
        contentUnhashed: 0,
      });
    }
  });

  it('finds a trace put back to its content at ingestion altered: a later hash counts, not any', async () => {
    const w = new World();
    const trace = w.ingest(id(1), 'original');
    const original = structuredClone(trace.outputDecision);
    w.ingest(id(2), 'other');
    w.correct(id(1), 'corrected');
    trace.outputDecision = original;
    expect(await w.check(2)).toMatchObject({
      contentChecked: 2,
      contentAltered: 1,
      contentAlteredIds: [id(1)],
    });
  });

  it('counts erased and unhashed traces, altered ones (content or salt), and skips deleted ones', async () => {
    const w = new World();
    w.ingest(id(1), 'intact');
    w.ingest(id(2), 'to change').outputDecision = { action: 'deny' };
    w.ingest(id(3), 'salt lost').contentSalt = null;
    Object.assign(w.ingest(id(4), 'erased'), {
      inputContext: null,
      outputDecision: null,
      metadata: null,
      contentSalt: null,
      erasedAt: new Date(),
    });
    // Stored before content hashing: entries without a hash, even after feedback.
    w.traces.set(id(5), { ...w.ingest(id(5), 'legacy'), contentSalt: null, contentEntryId: null });
    w.log.at(-1)!.contentHash = null;
    w.append('cpi.approved', id(5), null);
    w.ingest(id(6), 'purged');
    w.traces.delete(id(6));
    expect(await w.check(2)).toEqual({
      contentChecked: 5,
      contentAltered: 2,
      contentAlteredIds: [id(3), id(2)],
      contentErased: 1,
      contentUnhashed: 1,
    });
  });

  it('counts a trace whose entries record no hash altered when it has a salt or a pointer (only a legacy trace has neither)', async () => {
    const w = new World();
    w.traces.set(id(1), { ...w.ingest(id(1), 'legacy, salt added'), contentEntryId: null });
    w.log.at(-1)!.contentHash = null;
    w.traces.set(id(2), { ...w.ingest(id(2), 'legacy'), contentSalt: null, contentEntryId: null });
    w.log.at(-1)!.contentHash = null;
    expect(await w.check(2)).toMatchObject({
      contentChecked: 2,
      contentAltered: 1,
      contentAlteredIds: [id(1)],
      contentUnhashed: 1,
    });
  });

  it('counts a trace altered whose pointer to its content entry was cleared or moved to an older entry', async () => {
    const w = new World();
    w.ingest(id(1), 'pointer cleared').contentEntryId = null;
    const moved = w.ingest(id(2), 'original');
    const ingestion = moved.contentEntryId;
    const original = structuredClone(moved.outputDecision);
    w.correct(id(2), 'corrected');
    // Put back, pointer and all, to what ingestion recorded: the latest hash is the correction's.
    Object.assign(moved, { outputDecision: original, contentEntryId: ingestion });
    w.ingest(id(3), 'untouched');
    expect(await w.check(2)).toMatchObject({
      contentChecked: 3,
      contentAltered: 2,
      contentAlteredIds: [id(2), id(1)],
    });
  });

  it('reads at most 500 traces a query, and large ones in smaller groups (4 MiB stored a query)', async () => {
    const w = new World();
    for (let n = 1; n <= 1200; n++) w.ingest(id(n), 'small');
    expect((await w.check(10_000)).contentChecked).toBe(1200);
    expect(w.reads).toEqual([500, 500, 200]);

    const large = new World();
    const mib = (n: number) => 'x'.repeat(Math.round(n * 1024 * 1024));
    // Ingested: 1.5 MiB, 1.5 MiB, 3 MiB, 5 MiB (over the budget: alone), then three small ones.
    for (const [n, size] of [
      [1, 1.5],
      [2, 1.5],
      [3, 3],
      [4, 5],
    ] as const)
      large.ingest(id(n), mib(size));
    for (let n = 5; n <= 7; n++) large.ingest(id(n), 'small');
    expect((await large.check(10_000)).contentAltered).toBe(0);
    // Read from the head down: the small ones, the 5 MiB one alone, the 3 MiB one, the two of 1.5 MiB together.
    expect(large.reads).toEqual([3, 1, 1, 2]);
  });

  it(`names at most ${CONTENT_ALTERED_LISTED} altered traces, the most recently recorded first`, async () => {
    const w = new World();
    for (let n = 1; n <= 25; n++) w.ingest(id(n), 'text').rationale = 'changed';
    const result = await w.check(7);
    expect(result.contentAltered).toBe(25);
    expect(result.contentAlteredIds).toEqual(Array.from({ length: 20 }, (_, i) => id(25 - i)));
  });

  it('checks again a trace that feedback changed while the walk ran (its entry after the head read)', async () => {
    const w = new World();
    w.ingest(id(1), 'before');
    w.ingest(id(2), 'tampered').metadata = { forged: true };
    let corrected = false;
    w.beforeRead = (ids) => {
      if (!corrected && ids.includes(id(1))) {
        corrected = true;
        w.correct(id(1), 'during the walk');
      }
    };
    expect(await w.check(1)).toMatchObject({
      contentChecked: 2,
      contentAltered: 1,
      contentAlteredIds: [id(2)],
    });
    expect(corrected).toBe(true);
  });
});
