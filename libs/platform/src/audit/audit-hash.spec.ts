import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chainHash, GENESIS_HASH, normaliseMetadata } from './audit-hash.js';

const entry = {
  sequence: 1,
  organizationId: '65f000000000000000000001',
  eventType: 'auth.login',
  userId: '65f000000000000000000002',
  actor: { type: 'user' as const, id: '65f000000000000000000002', email: 'a@example.com' },
  targetType: 'user',
  targetId: '65f000000000000000000002',
  metadata: { method: 'password', b: 2, a: 1 },
  ip: '127.0.0.1',
  userAgent: 'vitest',
  createdAt: new Date('2026-04-11T10:00:00.123Z'),
};

describe('chainHash', () => {
  it('hashes prevHash, a newline and the RFC 8785 canonical JSON (sorted keys, no whitespace)', () => {
    // Written out by hand in canonical order, independently of the canonicaliser.
    const canonical =
      '{"actor":{"email":"a@example.com","id":"65f000000000000000000002","type":"user"},' +
      '"createdAt":"2026-04-11T10:00:00.123Z","eventType":"auth.login","ip":"127.0.0.1",' +
      '"metadata":{"a":1,"b":2,"method":"password"},"organizationId":"65f000000000000000000001",' +
      '"sequence":1,"targetId":"65f000000000000000000002","targetType":"user",' +
      '"userAgent":"vitest","userId":"65f000000000000000000002"}';
    const expected = createHash('sha256').update(`${GENESIS_HASH}\n${canonical}`).digest('hex');
    expect(chainHash(GENESIS_HASH, entry)).toBe(expected);
  });

  it('changes when any hashed field or the previous hash changes', () => {
    const base = chainHash(GENESIS_HASH, entry);
    expect(chainHash('1'.repeat(64), entry)).not.toBe(base);
    expect(chainHash(GENESIS_HASH, { ...entry, metadata: { ...entry.metadata, a: 3 } })).not.toBe(base);
    expect(chainHash(GENESIS_HASH, { ...entry, sequence: 2 })).not.toBe(base);
    expect(chainHash(GENESIS_HASH, { ...entry, createdAt: new Date('2026-04-11T10:00:00.124Z') })).not.toBe(
      base,
    );
  });
});

describe('normaliseMetadata', () => {
  it('drops undefined, removes NUL characters and repairs lone surrogates, as jsonb would store them', () => {
    expect(normaliseMetadata({ a: undefined, b: 'x\u0000y', c: '\ud800', d: [1, undefined] })).toEqual({
      b: 'xy',
      c: '\ufffd',
      d: [1, null],
    });
    expect(normaliseMetadata(undefined)).toEqual({});
  });
});

describe('normaliseMetadata keys', () => {
  it('cleans keys as well as values, so hashing never meets a lone surrogate', () => {
    const cleaned = normaliseMetadata({ 'k\ud800': 1, 'n\u0000': { 'x\udfff': 'v' } });
    expect(cleaned).toEqual({ 'k\ufffd': 1, n: { 'x\ufffd': 'v' } });
    expect(() => chainHash(GENESIS_HASH, { ...entry, metadata: cleaned })).not.toThrow();
  });
});
