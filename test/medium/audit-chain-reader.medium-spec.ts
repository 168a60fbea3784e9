/**
 * AuditChainReader (governance audit) on a real database: an organization's chain read as text rows in sequence
 * ranges, the next range requested before the current one is handed over. Covered: ranges that start and end
 * mid-chain, empty and reversed ranges, ranges that run past the chain's end, a chain longer than one page at the
 * default page size, each row's text against the entry the audit log wrote (and its hash recomputed with the
 * platform's `chainHash`), and another organization's entries, which a range never includes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AuditEntryRow, type AuditInput, AuditLog, chainHash, GENESIS_HASH, hashedContent } from '#platform';
import {
  AuditChainReader,
  CHAIN_PAGE,
  type ChainRow,
  Col,
} from '../../libs/governance/src/audit/audit-chain-reader.js';
import type { TestOrganization } from '../support/builders.js';
import { MediumContext } from '../support/medium.js';

const SYSTEM = { type: 'system' as const, id: null, email: null };

describe('AuditChainReader: an organization’s chain in pipelined sequence ranges', () => {
  let ctx: MediumContext;
  let a: TestOrganization;
  let b: TestOrganization;
  let audit: AuditLog;
  let reader: AuditChainReader;
  /** What the audit log wrote to a's chain in this file, by sequence. */
  const writtenA = new Map<number, AuditEntryRow>();
  const writtenB: AuditEntryRow[] = [];
  let headA: number;
  let headB: number;

  /** The rows of each page of a range. */
  async function pagesOf(organizationId: string, after: number, upTo: number, size?: number) {
    const pages: ChainRow[][] = [];
    for await (const page of reader.pages(organizationId, after, upTo, size)) pages.push(page);
    return pages;
  }
  const sequences = (rows: ChainRow[]) => rows.map((row) => Number(row[Col.Sequence]));
  const range = (first: number, last: number) =>
    Array.from({ length: Math.max(0, last - first + 1) }, (_, i) => first + i);
  const headOf = async (organizationId: string) => Number((await reader.head(organizationId))![Col.Sequence]);

  /** An entry's hashed content, parsed back from the reader's text columns. */
  const contentOf = (
    row: ChainRow,
    organizationId: string,
  ): Omit<AuditEntryRow, 'id' | 'prevHash' | 'hash'> => ({
    sequence: Number(row[Col.Sequence]),
    organizationId,
    eventType: row[Col.EventType]!,
    userId: row[Col.UserId],
    actor: JSON.parse(row[Col.Actor]!) as AuditEntryRow['actor'],
    targetType: row[Col.TargetType],
    targetId: row[Col.TargetId],
    metadata: JSON.parse(row[Col.Metadata]!) as Record<string, unknown>,
    ip: row[Col.Ip],
    userAgent: row[Col.UserAgent],
    createdAt: new Date(row[Col.CreatedAt]!),
  });

  beforeAll(async () => {
    ctx = await MediumContext.create();
    a = await ctx.newOrganization({ organizationName: 'Chain reader A' });
    b = await ctx.newOrganization({ organizationName: 'Chain reader B' });
    audit = ctx.service(AuditLog);
    reader = ctx.service(AuditChainReader);
    // Both chains written together, b's longer than a's, so that every sequence of a's chain exists in b's too.
    // Metadata and request fields with text jsonb and the hash must both keep as written.
    const inputs: AuditInput[] = [];
    for (let i = 0; i < 60; i++) {
      if (i < 30) {
        inputs.push({
          organizationId: a.id,
          eventType: i % 2 === 0 ? 'test.reader' : 'test.reader.ünïcode',
          actor: i % 3 === 0 ? SYSTEM : { type: 'api_key', id: `key-${i}`, email: null },
          targetType: i % 4 === 0 ? null : 'thing',
          targetId: i % 4 === 0 ? null : `t"${i}\\`,
          metadata: {
            i,
            z: 'last key first',
            text: 'quote " backslash \\ newline \n tab \t emoji 😀 é',
            numbers: [0.1, -2.5, 1e21, 12345678901234, 0],
            nested: { yes: true, no: false, none: null, list: [{ b: 1, a: 2 }] },
          },
          meta: i % 5 === 0 ? { ip: '203.0.113.7', userAgent: 'reader-test/1.0 (ü)' } : undefined,
        });
      }
      inputs.push({ organizationId: b.id, eventType: 'test.reader.other', actor: SYSTEM, metadata: { i } });
    }
    for (const entry of await audit.appendMany(inputs)) {
      if (entry.organizationId === a.id) writtenA.set(entry.sequence, entry);
      else writtenB.push(entry);
    }
    // And some through `record`, one at a time, as services write them.
    for (let i = 0; i < 5; i++) {
      const entry = await audit.record(
        { organizationId: a.id, actor: SYSTEM },
        'test.reader.recorded',
        { type: 'thing', id: `r${i}` },
        { i, at: ctx.clock.now().toISOString() },
        { ip: null, userAgent: 'recorder' },
      );
      writtenA.set(entry.sequence, entry);
    }
    headA = await headOf(a.id);
    headB = await headOf(b.id);
  });
  afterAll(async () => ctx?.close());

  it('keeps each organization’s entries on its own chain when both are appended together', () => {
    expect(headA).toBe(Math.max(...writtenA.keys()));
    expect(headB).toBe(writtenB[writtenB.length - 1]!.sequence);
    expect(headB).toBeGreaterThan(headA);
    expect(headA).toBeGreaterThan(30);
  });

  it('reads a range that starts and ends mid-chain as consecutive pages of the page size', async () => {
    expect((await pagesOf(a.id, 5, 23, 7)).map(sequences)).toEqual([
      range(6, 12),
      range(13, 19),
      range(20, 23),
    ]);
    expect((await pagesOf(a.id, 5, 19, 7)).map(sequences)).toEqual([range(6, 12), range(13, 19)]);
    expect((await pagesOf(a.id, 0, 3, 10)).map(sequences)).toEqual([range(1, 3)]);
    expect((await pagesOf(a.id, headA - 1, headA, 10)).map(sequences)).toEqual([[headA]]);
  });

  it('reads nothing for an empty or reversed range', async () => {
    expect(await pagesOf(a.id, 10, 10, 5)).toEqual([]);
    expect(await pagesOf(a.id, 12, 3, 5)).toEqual([]);
    expect(await pagesOf(a.id, headA, headA, 5)).toEqual([]);
  });

  it('stops at the chain’s end for a range that runs past it', async () => {
    const past = await pagesOf(a.id, headA - 3, headA + 40, 8);
    expect(past.flat().map((row) => Number(row[Col.Sequence]))).toEqual(range(headA - 2, headA));
    for (const page of past) expect(page.length).toBeLessThanOrEqual(8);
    expect((await pagesOf(a.id, headA, headA + 40, 8)).flat()).toEqual([]);
    expect(await reader.at(a.id, headA + 1)).toBeUndefined();
    expect(await reader.at(a.id, 0)).toBeUndefined();
  });

  it('gives each row as the text of what the audit log wrote, and its hash recomputes with chainHash', async () => {
    const rows = (await pagesOf(a.id, 0, headA, 9)).flat();
    expect(sequences(rows)).toEqual(range(1, headA));
    let prevHash = GENESIS_HASH;
    for (const row of rows) {
      expect(row).toHaveLength(13);
      expect(row[Col.PrevHash]).toBe(prevHash);
      expect(chainHash(row[Col.PrevHash]!, contentOf(row, a.id))).toBe(row[Col.Hash]);
      prevHash = row[Col.Hash]!;
    }
    expect(prevHash).toBe((await reader.head(a.id))![Col.Hash]);
    // The entries written in this file, column by column.
    const bySequence = new Map(rows.map((row) => [Number(row[Col.Sequence]), row]));
    for (const [sequence, entry] of writtenA) {
      const row = bySequence.get(sequence)!;
      expect(row[Col.Id]).toBe(entry.id);
      expect(row[Col.Sequence]).toBe(String(entry.sequence));
      expect(row[Col.EventType]).toBe(entry.eventType);
      expect(row[Col.UserId]).toBe(entry.userId);
      expect(JSON.parse(row[Col.Actor]!)).toEqual(entry.actor);
      expect(row[Col.TargetType]).toBe(entry.targetType);
      expect(row[Col.TargetId]).toBe(entry.targetId);
      expect(JSON.parse(row[Col.Metadata]!)).toEqual(entry.metadata);
      expect(row[Col.Ip]).toBe(entry.ip);
      expect(row[Col.UserAgent]).toBe(entry.userAgent);
      expect(row[Col.CreatedAt]).toBe(entry.createdAt.toISOString());
      expect(row[Col.PrevHash]).toBe(entry.prevHash);
      expect(row[Col.Hash]).toBe(entry.hash);
      expect(chainHash(entry.prevHash, contentOf(row, a.id))).toBe(entry.hash);
    }
    // The registration's entries, before this file's, against the audit log's own read of them.
    const earlier = rows.filter((row) => !writtenA.has(Number(row[Col.Sequence])));
    expect(earlier.length).toBeGreaterThan(0);
    const stored = new Map((await audit.byIds(earlier.map((row) => row[Col.Id]!))).map((e) => [e.id, e]));
    for (const row of earlier) {
      const entry = stored.get(row[Col.Id]!)!;
      expect(hashedContent(contentOf(row, a.id))).toEqual(hashedContent(entry));
      expect([row[Col.PrevHash], row[Col.Hash]]).toEqual([entry.prevHash, entry.hash]);
    }
    // `at` and `head` read the same text as the ranges.
    expect(await reader.at(a.id, 17)).toEqual(bySequence.get(17));
    expect(await reader.head(a.id)).toEqual(bySequence.get(headA));
  });

  it('never includes another organization’s entries, whatever the range', async () => {
    const rowsA = (await pagesOf(a.id, 0, headB + 10, 11)).flat();
    expect(sequences(rowsA)).toEqual(range(1, headA));
    const idsB = new Set(writtenB.map((entry) => entry.id));
    expect(rowsA.filter((row) => idsB.has(row[Col.Id]!))).toEqual([]);
    // b's chain holds the sequences past a's head; a's reads do not reach them.
    expect(await reader.at(b.id, headA + 1)).toBeDefined();
    expect(await reader.at(a.id, headA + 1)).toBeUndefined();
    expect((await pagesOf(a.id, headA, headB, 5)).flat()).toEqual([]);
    const rowsB = (await pagesOf(b.id, 0, headB, 11)).flat();
    expect(sequences(rowsB)).toEqual(range(1, headB));
    const idsA = new Set([...writtenA.values()].map((entry) => entry.id));
    expect(rowsB.filter((row) => idsA.has(row[Col.Id]!))).toEqual([]);
    // b's rows hash as b's entries only: the organization is part of the hashed content.
    const rowB = rowsB[rowsB.length - 1]!;
    expect(chainHash(rowB[Col.PrevHash]!, contentOf(rowB, b.id))).toBe(rowB[Col.Hash]);
    expect(chainHash(rowB[Col.PrevHash]!, contentOf(rowB, a.id))).not.toBe(rowB[Col.Hash]);
    // An organization without entries has no head and no pages.
    expect(await reader.head('0'.repeat(24))).toBeUndefined();
    expect((await pagesOf('0'.repeat(24), 0, 100, 10)).flat()).toEqual([]);
  });

  it('reads a chain longer than one page at the default page size, asking for each page one ahead', async () => {
    const c = await ctx.newOrganization({ organizationName: 'Chain reader C' });
    const base = await headOf(c.id);
    const extra = CHAIN_PAGE + 37 - base;
    const written = await audit.appendMany(
      Array.from({ length: extra }, (_, i) => ({
        organizationId: c.id,
        eventType: 'test.reader.long',
        actor: SYSTEM,
        metadata: { i },
      })),
    );
    const head = await headOf(c.id);
    expect(head).toBe(CHAIN_PAGE + 37);
    const requests = vi.spyOn(ctx.db, 'textRows');
    try {
      const seen: number[][] = [];
      const requestedBeforeEachPage: number[] = [];
      for await (const page of reader.pages(c.id, 0, head)) {
        requestedBeforeEachPage.push(requests.mock.calls.length);
        seen.push(sequences(page));
      }
      expect(seen.map((page) => page.length)).toEqual([CHAIN_PAGE, 37]);
      expect(seen.flat()).toEqual(range(1, head));
      // When the first page is handed over, the second has been asked for already; nothing after the last.
      expect(requestedBeforeEachPage).toEqual([2, 2]);
    } finally {
      requests.mockRestore();
    }
    const rows = (await pagesOf(c.id, 0, head)).flat();
    let prevHash = GENESIS_HASH;
    for (const row of rows) {
      expect(row[Col.PrevHash]).toBe(prevHash);
      expect(chainHash(prevHash, contentOf(row, c.id))).toBe(row[Col.Hash]);
      prevHash = row[Col.Hash]!;
    }
    expect(rows[rows.length - 1]![Col.Hash]).toBe(written[written.length - 1]!.hash);
    expect(rows.slice(base).map((row) => row[Col.Id])).toEqual(written.map((entry) => entry.id));
  });
});
