import { describe, expect, it } from 'vitest';
import { chainHash, GENESIS_HASH } from './audit-hash.js';
import { verifyExportedChain } from './export-verify.js';

const ORG = 'a'.repeat(24);

/** Export lines of a valid chain of `n` entries, with a header and another table's line in between. */
function exportLines(n: number): string[] {
  const lines = [JSON.stringify({ export: { organizationId: ORG, format: 1, tables: ['audit_entries'] } })];
  let prev = GENESIS_HASH;
  for (let sequence = 1; sequence <= n; sequence++) {
    const createdAt = new Date(Date.UTC(2026, 5, 1, 12, 0, sequence));
    const entry = {
      sequence,
      organizationId: ORG,
      eventType: 'agent.created',
      userId: null,
      actor: { type: 'system' as const, id: 'cli', email: null },
      targetType: 'agent',
      targetId: String(sequence),
      metadata: { n: sequence, nested: { b: 1, a: [1, 2] } },
      ip: null,
      userAgent: null,
      createdAt,
    };
    const hash = chainHash(prev, entry);
    lines.push(
      JSON.stringify({
        table: 'audit_entries',
        record: {
          id: String(sequence).padStart(24, '0'),
          organization_id: ORG,
          sequence,
          event_type: entry.eventType,
          user_id: null,
          actor: entry.actor,
          target_type: entry.targetType,
          target_id: entry.targetId,
          metadata: entry.metadata,
          ip: null,
          user_agent: null,
          // As PostgreSQL's row_to_json writes a timestamptz.
          created_at: createdAt.toISOString().replace('Z', '+00:00'),
          prev_hash: prev,
          hash,
        },
      }),
    );
    if (sequence === 1) lines.push(JSON.stringify({ table: 'agents', record: { id: 'x' } }));
    prev = hash;
  }
  return lines;
}

/** The same lines closed with their end line, as `org:export` writes them. */
function endedLines(n: number): string[] {
  const lines = exportLines(n);
  const head = n > 0 ? (JSON.parse(lines.at(-1)!) as { record: { hash: string } }).record.hash : null;
  const records = { audit_entries: n, ...(n > 0 ? { agents: 1 } : {}) };
  return [...lines, JSON.stringify({ end: { records, audit: { entries: n, head } } })];
}

describe('verifyExportedChain', () => {
  it('accepts an untouched chain and reports its head', () => {
    const lines = endedLines(5);
    const result = verifyExportedChain(lines);
    expect(result).toMatchObject({ valid: true, entries: 5, organizationId: ORG });
    expect(result.head).toBe((JSON.parse(lines.at(-2)!) as { record: { hash: string } }).record.hash);
  });

  it('finds a cut file, removed lines of any table, a forged end line and lines after the end', () => {
    const lines = endedLines(4);
    expect(verifyExportedChain(lines.slice(0, -1))).toMatchObject({
      valid: false,
      brokenAt: { reason: 'no end line: the export is cut short' },
    });
    // The last two entries gone, the end line kept: the chain alone would still verify.
    const cut = [...lines.slice(0, -3), lines.at(-1)!];
    expect(verifyExportedChain(cut)).toMatchObject({
      valid: false,
      brokenAt: { reason: expect.stringMatching(/end line/) },
    });
    const noAgent = lines.filter((line) => !line.startsWith('{"table":"agents"'));
    expect(verifyExportedChain(noAgent)).toMatchObject({
      valid: false,
      brokenAt: { reason: 'the end line counts other records of agents than the file holds' },
    });
    expect(verifyExportedChain([...lines, lines[1]!])).toMatchObject({
      valid: false,
      brokenAt: { reason: 'a line after the end line' },
    });
  });

  it('refuses an entry of another organization than the header’s', () => {
    const lines = endedLines(2);
    const header = JSON.stringify({ export: { organizationId: 'b'.repeat(24), format: 1, tables: [] } });
    expect(verifyExportedChain([header, ...lines.slice(1)])).toMatchObject({
      valid: false,
      brokenAt: { sequence: 1, reason: 'entry of another organization' },
    });
  });

  it('accepts an export without audit entries', () => {
    expect(verifyExportedChain([])).toEqual({ valid: true, entries: 0, organizationId: null, head: null });
  });

  it('finds an altered field, a missing entry, a reordering and a line that is not JSON', () => {
    const lines = exportLines(4);
    const altered = [...lines];
    const third = JSON.parse(altered[4]!) as { record: Record<string, unknown> };
    third.record.event_type = 'agent.deleted';
    altered[4] = JSON.stringify(third);
    expect(verifyExportedChain(altered)).toMatchObject({
      valid: false,
      entries: 2,
      brokenAt: { line: 5, sequence: 3, reason: 'hash does not match the entry' },
    });
    expect(verifyExportedChain(lines.filter((_, i) => i !== 3))).toMatchObject({
      valid: false,
      brokenAt: { sequence: 3, reason: 'expected sequence 2' },
    });
    const swapped = [lines[0]!, lines[1]!, lines[2]!, lines[4]!, lines[3]!, lines[5]!];
    expect(verifyExportedChain(swapped).valid).toBe(false);
    expect(verifyExportedChain([...lines.slice(0, 2), '{not json'])).toMatchObject({
      valid: false,
      brokenAt: { line: 3, reason: 'line is not JSON' },
    });
  });

  it('refuses a re-hashed chain whose first entry does not start from the genesis hash', () => {
    const lines = exportLines(2);
    const first = JSON.parse(lines[1]!) as { record: Record<string, unknown> };
    first.record.prev_hash = 'f'.repeat(64);
    expect(verifyExportedChain([lines[0]!, JSON.stringify(first)])).toMatchObject({
      valid: false,
      brokenAt: { sequence: 1, reason: 'prev_hash is not the previous hash' },
    });
  });
});
