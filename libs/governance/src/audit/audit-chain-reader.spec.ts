import { describe, expect, it } from 'vitest';
import { type AuditEntryRow, canonicalJson, chainHash, GENESIS_HASH } from '#platform';
import { fromBits, RFC8785_NUMBERS } from '../../../../test/fixtures/rfc8785-vectors.js';
import { canonicalParsed, ChainHasher, type ChainRow, Col, numbersExact } from './audit-chain-reader.js';

describe('canonicalParsed (RFC 8785)', () => {
  it('writes the numbers of RFC 8785 Appendix B as the RFC does', () => {
    for (const [bits, expected] of RFC8785_NUMBERS) {
      expect(canonicalParsed(fromBits(bits)), bits).toBe(expected);
      expect(canonicalParsed(JSON.parse(`[${expected}]`)), expected).toBe(`[${expected}]`);
    }
  });

  it('sorts keys by UTF-16 code units as RFC 8785 §3.2.3 shows, and writes §3.2.2 the RFC way', () => {
    const sorting = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh",' +
        '"1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    ) as Record<string, string>;
    expect(canonicalParsed(sorting)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    const example = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalParsed(example)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('agrees with canonicalJson on nested values', () => {
    const samples = [
      { z: { y: [3, 2, { x: null, w: 'é' }] }, a: [], m: {} },
      ['line\nbreak "quoted" \\ \u0001 \u2028', 1.5, -2, 1e300],
      { emoji: '👩‍💻', nested: { deeper: { deepest: [true, false, 'x'] } } },
    ];
    for (const sample of samples) expect(canonicalParsed(sample)).toBe(canonicalJson(sample));
  });
});

/** An entry as PostgreSQL returns it to the bulk reads: jsonb as its own text (spaces, its own key order). */
function jsonbText(value: unknown): string {
  return JSON.stringify(value, null, 1).replace(/\n\s*/g, ' ');
}

describe('ChainHasher', () => {
  const organizationId = '65f1c0de0000000000000001';
  const entry: Omit<AuditEntryRow, 'id' | 'prevHash' | 'hash'> = {
    sequence: 7,
    organizationId,
    eventType: 'doc.créé',
    userId: null,
    actor: { type: 'user', id: 'u"1\\', email: 'a@example.com' },
    targetType: 'document',
    targetId: 'tab\there\u0001',
    metadata: { z: 1, a: [true, null, 0.1, 1e21, 'ü€😀'], nested: { b: 'x', a: 'y' } },
    ip: '203.0.113.9',
    userAgent: null,
    createdAt: new Date('2026-03-02T10:00:00.000Z'),
  };
  const prevHash = GENESIS_HASH.replace(/^0/, 'a');
  const expected = chainHash(prevHash, entry);

  it('recomputes chainHash from a row of column texts', () => {
    const row: ChainRow = [];
    row[Col.Sequence] = String(entry.sequence);
    row[Col.Id] = 'x';
    row[Col.EventType] = entry.eventType;
    row[Col.UserId] = entry.userId;
    row[Col.Actor] = jsonbText({ id: entry.actor.id, type: entry.actor.type, email: entry.actor.email });
    row[Col.TargetType] = entry.targetType;
    row[Col.TargetId] = entry.targetId;
    row[Col.Metadata] = jsonbText(entry.metadata);
    row[Col.Ip] = entry.ip;
    row[Col.UserAgent] = entry.userAgent;
    row[Col.CreatedAt] = entry.createdAt.toISOString();
    row[Col.PrevHash] = prevHash;
    row[Col.Hash] = expected;
    const hasher = new ChainHasher(organizationId);
    expect(hasher.hash(row)).toBe(expected);
    expect(hasher.hash({ ...row, [Col.TargetId]: 'other' } as ChainRow)).not.toBe(expected);
    expect(hasher.hash({ ...row, [Col.Metadata]: '{not json' } as ChainRow)).toBeNull();
  });
});

describe('numbersExact', () => {
  it('accepts the forms PostgreSQL writes for the doubles JavaScript wrote', () => {
    for (const text of [
      '{"a": 1, "b": [0.1, -0.5, 1000000000000000000000, 0.0000001, 1.0, 5e-324, 9007199254740992]}',
      '{"s": "9007199254740993 inside a string \\" 0.10000000000000000001", "n": -0}',
      '[1E+21, 1e21, 0.000001, 1.7976931348623157e308]',
    ]) {
      expect(numbersExact(text), text).toBe(true);
    }
  });

  it('refuses a literal that is not exactly its double: an edit that would hash like the original', () => {
    for (const text of [
      '{"amountCents": 9007199254740993}',
      '{"ratio": 0.10000000000000000001}',
      '[1e400]',
      '{"nested": {"deep": [1, 2, 3.00000000000000000000001]}}',
    ]) {
      expect(numbersExact(text), text).toBe(false);
    }
  });

  it('makes the hash of such a row fail instead of passing', () => {
    const hasher = new ChainHasher('65f1c0de0000000000000001');
    const row: ChainRow = [];
    row[Col.Sequence] = '2';
    row[Col.Actor] = '{"id": null, "type": "system", "email": null}';
    row[Col.Metadata] = '{"amountCents": 9007199254740993}';
    row[Col.CreatedAt] = '2026-03-02T10:00:00.000Z';
    row[Col.PrevHash] = GENESIS_HASH;
    expect(hasher.hash(row)).toBeNull();
    row[Col.Metadata] = '{"amountCents": 9007199254740992}';
    expect(hasher.hash(row)).toMatch(/^[0-9a-f]{64}$/);
  });
});
