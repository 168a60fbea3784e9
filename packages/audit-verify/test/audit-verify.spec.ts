import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, KeyObject, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// The service's own hash and canonical JSON: the chains and signatures below are built with them, so the package is
// checked against what the service writes, not against itself.
import { chainHash, GENESIS_HASH } from '../../../libs/platform/src/audit/audit-hash.js';
import { canonicalJson as serviceCanonicalJson } from '../../../libs/platform/src/crypto/canonical-json.js';
import { fromBits, RFC8785_NUMBERS } from '../../../test/fixtures/rfc8785-vectors.js';
import type { Checkpoint } from '../../../test/support/audit-checkpoints.js';
import { canonicalJson, ChainVerifier, isCanonicalNumber } from '../src/index.mjs';

const BIN = fileURLToPath(new URL('../bin/audit-verify.mjs', import.meta.url));
const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.url));
const ORG = '65f0000000000000000000a1';
const OTHER_ORG = '65f0000000000000000000b2';

interface Entry {
  id: string;
  sequence: number;
  organizationId: string;
  eventType: string;
  userId: string | null;
  actor: { type: 'user' | 'api_key' | 'agent' | 'scim' | 'system'; id: string | null; email: string | null };
  targetType: string | null;
  targetId: string | null;
  metadata: Record<string, unknown>;
  ip: string | null;
  userAgent: string | null;
  createdAt: string;
  prevHash: string;
  hash: string;
}

interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  keyId: string;
  published: {
    keyId: string;
    algorithm: 'Ed25519';
    publicKeyPem: string;
    jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string };
    createdAt: string;
  };
}

/** The service's hash of an entry (its `chainHash` takes createdAt as a Date). */
function serviceHash(prevHash: string, entry: Entry): string {
  const { id: _id, prevHash: _prev, hash: _hash, createdAt, ...rest } = entry;
  return chainHash(prevHash, { ...rest, createdAt: new Date(createdAt) });
}

/** Metadata with what canonicalisation must get right: key order, unicode, numbers, nesting, nulls. */
function metadataFor(sequence: number): Record<string, unknown> {
  return {
    z: sequence,
    a: { nested: [1, 'two', null, true, { y: 0.1, x: -0 }] },
    é: 'caf\u00e9 \u20ac \ud83d\ude00 "quoted" \\ \n\t',
    '\u20ac': 1e21,
    '1': 1e-7,
    big: 9007199254740992,
    ratio: 333333333.3333332,
    ...(sequence % 2 ? { odd: true } : {}),
  };
}

/** A chain of `count` entries built as the service builds it (sequence 1.., GENESIS_HASH first). */
function buildChain(count: number, organizationId = ORG, startAt = 0): Entry[] {
  const entries: Entry[] = [];
  let prevHash = GENESIS_HASH;
  for (let sequence = 1; sequence <= count; sequence++) {
    const entry: Entry = {
      id: `e${String(sequence).padStart(23, '0')}`,
      sequence,
      organizationId,
      eventType: sequence % 3 ? 'trace.created' : 'policy.updated',
      userId: sequence % 4 ? `u${String(sequence).padStart(23, '0')}` : null,
      actor:
        sequence % 4
          ? {
              type: 'user',
              id: `u${String(sequence).padStart(23, '0')}`,
              email: `user${sequence}@example.com`,
            }
          : { type: 'system', id: null, email: null },
      targetType: sequence % 5 ? 'trace' : null,
      targetId: sequence % 5 ? `t-${sequence}` : null,
      metadata: metadataFor(sequence),
      ip: sequence % 2 ? '203.0.113.7' : null,
      userAgent: sequence % 2 ? 'curl/8.5.0' : null,
      createdAt: new Date(Date.UTC(2026, 10, 25, 20, 0, 0, 0) + (startAt + sequence) * 1234).toISOString(),
      prevHash,
      hash: '',
    };
    entry.hash = serviceHash(prevHash, entry);
    prevHash = entry.hash;
    entries.push(entry);
  }
  return entries;
}

/** Recomputes every prevHash and hash: a rewritten chain that is internally valid. */
function rehash(entries: Entry[]): Entry[] {
  let prevHash = GENESIS_HASH;
  return entries.map((original) => {
    const entry = { ...original, prevHash };
    entry.hash = serviceHash(prevHash, entry);
    prevHash = entry.hash;
    return entry;
  });
}

function makeKey(createdAt = '2026-01-01T00:00:00.000Z'): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x!;
  // RFC 7638, written out independently of the package.
  const keyId = createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
  return {
    privateKey,
    publicKey,
    keyId,
    published: {
      keyId,
      algorithm: 'Ed25519',
      publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      jwk: { kty: 'OKP', crv: 'Ed25519', x },
      createdAt,
    },
  };
}

let checkpointCount = 0;
function checkpoint(
  key: SigningKey,
  entry: { sequence: number; hash: string; organizationId?: string },
): Checkpoint {
  checkpointCount += 1;
  const signed = {
    organizationId: entry.organizationId ?? ORG,
    sequence: entry.sequence,
    hash: entry.hash,
    createdAt: new Date(Date.UTC(2026, 10, 25, 21, 0, 0, checkpointCount)).toISOString(),
    keyId: key.keyId,
  };
  const signature = sign(null, Buffer.from(serviceCanonicalJson(signed), 'utf8'), key.privateKey).toString(
    'base64url',
  );
  return { id: `cp${String(checkpointCount).padStart(22, '0')}`, ...signed, signature };
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function workdir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'audit-verify-'));
  dirs.push(dir);
  return dir;
}

const ndjson = (entries: unknown[]): string => entries.map((e) => JSON.stringify(e)).join('\n') + '\n';
const checkpointsEnvelope = (checkpoints: Checkpoint[]) =>
  JSON.stringify({
    success: true,
    data: [...checkpoints].sort((a, b) => b.sequence - a.sequence),
    pagination: { page: 1, limit: 50, total: checkpoints.length, totalPages: 1 },
  });
const keysEnvelope = (keys: SigningKey[]) =>
  JSON.stringify({ success: true, data: { keys: keys.map((k) => k.published) } });

/** Writes the files of a case and returns their paths. */
function files(dir: string, contents: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(contents).map(([name, text]) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return [name, path];
    }),
  );
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  lastLine: string;
}

function run(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      const lines = stdout.trimEnd().split('\n');
      resolve({ code, stdout, stderr, lastLine: lines[lines.length - 1] });
    });
  });
}

async function runJson(args: string[]) {
  const result = await run([...args, '--json']);
  expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
  return { ...result, report: JSON.parse(result.stdout) };
}

/**
 * A standard case: an export of `entries`, checkpoints and keys as the API answers them. Without checkpoints, no
 * `--checkpoints` is given (an empty checkpoints file is a failure of its own).
 */
function apiFiles(entries: unknown[], checkpoints: Checkpoint[], keys: SigningKey[]) {
  const dir = workdir();
  const paths = files(dir, {
    'audit.ndjson': ndjson(entries),
    'checkpoints.json': checkpointsEnvelope(checkpoints),
    'public-key.json': keysEnvelope(keys),
  });
  return [
    '--export',
    paths['audit.ndjson'],
    ...(checkpoints.length > 0 ? ['--checkpoints', paths['checkpoints.json']] : []),
    '--keys',
    paths['public-key.json'],
  ];
}

const key = makeKey();

describe('canonical JSON (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units (§3.2.3)', () => {
    const input = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
        '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('writes the example of §3.2.2 as the RFC does', () => {
    const input = JSON.parse(
      '{\n  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n' +
        '  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('writes the numbers of Appendix B as the RFC does', () => {
    for (const [bits, expected] of RFC8785_NUMBERS)
      expect(canonicalJson(fromBits(bits)), bits).toBe(expected);
    expect(canonicalJson(1e-7)).toBe('1e-7');
    expect(canonicalJson(-0)).toBe('0');
    expect(() => canonicalJson(fromBits('7fffffffffffffff'))).toThrow(); // NaN
    expect(() => canonicalJson(fromBits('7ff0000000000000'))).toThrow(); // Infinity
  });

  it('agrees with the service on entry content', () => {
    for (const sequence of [1, 2, 3, 4, 5]) {
      const value = { metadata: metadataFor(sequence), list: [metadataFor(sequence), null] };
      expect(canonicalJson(JSON.parse(JSON.stringify(value)))).toBe(serviceCanonicalJson(value));
    }
  });
});

// Each case starts Node processes (a usage test starts thirty): generous under a loaded CI machine.
describe('audit-verify CLI', { timeout: 60_000 }, () => {
  it('passes a clean export with its signed checkpoints (exit 0, OK verdict last)', async () => {
    const entries = buildChain(12);
    const checkpoints = [checkpoint(key, entries[4]), checkpoint(key, entries[9])];
    const result = await run(apiFiles(entries, checkpoints, [key]));
    expect(result.code).toBe(0);
    expect(result.lastLine).toBe(
      `OK: 12 entries, chain intact, head ${entries[11].hash.slice(0, 12)}… at sequence 12; ` +
        '2 checkpoints verified, latest at sequence 10',
    );
    expect(result.stdout).toContain(`chain: intact, head ${entries[11].hash} at sequence 12`);
    expect(result.stdout).toContain('signature valid, organization matches, contained');
  });

  it('passes an export alone, and tolerates blank lines, CRLF and a missing trailing newline', async () => {
    const entries = buildChain(5);
    const dir = workdir();
    const text = '\n' + entries.map((e) => JSON.stringify(e)).join('\r\n\r\n') + '\n\n';
    const { a, b } = files(dir, { a: text, b: ndjson(entries).trimEnd() });
    for (const path of [a, b]) {
      const result = await run(['--export', path]);
      expect(result.code).toBe(0);
      expect(result.lastLine).toMatch(
        /^OK: 5 entries, chain intact, head [0-9a-f]{12}… at sequence 5; no checkpoints given$/,
      );
    }
  });

  it('passes an empty export without checkpoints; an empty export with a signed checkpoint is truncation', async () => {
    const dir = workdir();
    const entries = buildChain(3);
    const paths = files(dir, {
      'empty.ndjson': '',
      'blank.ndjson': '\n\n',
      'checkpoints.json': checkpointsEnvelope([checkpoint(key, entries[2])]),
      'public-key.json': keysEnvelope([key]),
    });
    for (const path of [paths['empty.ndjson'], paths['blank.ndjson']]) {
      const empty = await run(['--export', path]);
      expect(empty.code).toBe(0);
      expect(empty.lastLine).toBe('OK: 0 entries, chain empty; no checkpoints given');
    }
    const truncated = await runJson([
      '--export',
      paths['empty.ndjson'],
      '--checkpoints',
      paths['checkpoints.json'],
      '--keys',
      paths['public-key.json'],
    ]);
    expect(truncated.code).toBe(1);
    expect(truncated.report.verdict).toBe(
      'FAILED: export truncated: ends at sequence 0, a signed checkpoint is at sequence 3',
    );
    expect(truncated.report.checkpoints[0]).toMatchObject({
      signature: 'valid',
      containment: 'beyond_export',
    });
  });

  it('finds an altered entry (hash_mismatch, with its line, sequence and id)', async () => {
    const entries = buildChain(8);
    entries[4] = { ...entries[4], metadata: { ...entries[4].metadata, z: 'changed' } };
    const { code, report } = await runJson(apiFiles(entries, [], [key]));
    expect(code).toBe(1);
    expect(report.chain.valid).toBe(false);
    expect(report.chain.brokenAt).toMatchObject({
      line: 5,
      sequence: 5,
      id: entries[4].id,
      reason: 'hash_mismatch',
    });
    expect(report.chain.headSequence).toBe(4);
    expect(report.verdict).toBe('FAILED: chain broken at line 5 (sequence 5): hash_mismatch');

    const text = await run(apiFiles(entries, [], [key]));
    expect(text.stdout).toContain(`chain: BROKEN at line 5, sequence 5, id ${entries[4].id}: hash_mismatch`);
    expect(text.lastLine).toBe('FAILED: chain broken at line 5 (sequence 5): hash_mismatch');
  });

  it('finds a changed createdAt, actor or null field', async () => {
    const changes: Partial<Entry>[] = [
      { createdAt: '2026-11-25T20:00:00.001Z' },
      { actor: { type: 'user', id: null, email: null } },
      { ip: '198.51.100.1' },
      { userAgent: null },
      { eventType: 'trace.deleted' },
    ];
    for (const change of changes) {
      const entries = buildChain(4);
      entries[2] = { ...entries[2], ...change };
      const { report } = await runJson([
        '--export',
        files(workdir(), { 'a.ndjson': ndjson(entries) })['a.ndjson'],
      ]);
      expect(report.chain.brokenAt, JSON.stringify(change)).toMatchObject({
        sequence: 3,
        reason: 'hash_mismatch',
      });
    }
  });

  it('finds an entry whose hash was recomputed but not linked (prev_hash_mismatch at the next entry)', async () => {
    const entries = buildChain(6);
    entries[2] = { ...entries[2], eventType: 'forged' };
    entries[2].hash = serviceHash(entries[2].prevHash, entries[2]);
    const { code, report } = await runJson(apiFiles(entries, [], [key]));
    expect(code).toBe(1);
    expect(report.chain.brokenAt).toMatchObject({ line: 4, sequence: 4, reason: 'prev_hash_mismatch' });
  });

  it('refuses a first prevHash other than the genesis hash', async () => {
    const entries = buildChain(2);
    entries[0] = { ...entries[0], prevHash: 'f'.repeat(64) };
    entries[0].hash = serviceHash(entries[0].prevHash, entries[0]);
    const { report } = await runJson([
      '--export',
      files(workdir(), { 'a.ndjson': ndjson(entries) })['a.ndjson'],
    ]);
    expect(report.chain.brokenAt).toMatchObject({ line: 1, sequence: 1, reason: 'prev_hash_mismatch' });
  });

  it('finds a dropped entry (sequence_gap) and a first sequence other than 1', async () => {
    const entries = buildChain(7);
    const dropped = [...entries.slice(0, 3), ...entries.slice(4)];
    const { code, report } = await runJson(apiFiles(dropped, [], [key]));
    expect(code).toBe(1);
    expect(report.chain.brokenAt).toMatchObject({
      line: 4,
      sequence: 5,
      id: entries[4].id,
      reason: 'sequence_gap',
    });

    const headless = await runJson(apiFiles(entries.slice(1), [], [key]));
    expect(headless.code).toBe(1);
    expect(headless.report.chain.brokenAt).toMatchObject({ line: 1, sequence: 2, reason: 'sequence_gap' });

    const repeated = await runJson(
      apiFiles([...entries.slice(0, 3), entries[2], ...entries.slice(3)], [], [key]),
    );
    expect(repeated.report.chain.brokenAt).toMatchObject({ line: 4, sequence: 3, reason: 'sequence_gap' });
  });

  it('finds a truncated tail against a signed checkpoint (beyond_export, exit 1)', async () => {
    const entries = buildChain(10);
    const checkpoints = [checkpoint(key, entries[3]), checkpoint(key, entries[9])];
    const { code, report } = await runJson(apiFiles(entries.slice(0, 7), checkpoints, [key]));
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(report.chain.valid).toBe(true); // what is left is a valid chain
    expect(report.truncation).toEqual({ truncated: true, exportEndsAt: 7, latestCheckpointSequence: 10 });
    const bySequence = Object.fromEntries(
      report.checkpoints.map((c: { sequence: number }) => [c.sequence, c]),
    );
    expect(bySequence[4]).toMatchObject({ signature: 'valid', containment: 'contained', ok: true });
    expect(bySequence[10]).toMatchObject({ signature: 'valid', containment: 'beyond_export', ok: false });
    expect(report.verdict).toBe(
      'FAILED: export truncated: ends at sequence 7, a signed checkpoint is at sequence 10',
    );

    const text = await run(apiFiles(entries.slice(0, 7), checkpoints, [key]));
    expect(text.code).toBe(1);
    expect(text.lastLine).toBe(
      'FAILED: export truncated: ends at sequence 7, a signed checkpoint is at sequence 10',
    );
  });

  it('finds a recomputed chain that is valid in itself but contradicts a signed checkpoint (rewritten)', async () => {
    const entries = buildChain(10);
    const checkpoints = [checkpoint(key, entries[1]), checkpoint(key, entries[7])];
    const forged = rehash(
      entries.map((e) => (e.sequence === 5 ? { ...e, metadata: { rewritten: true } } : e)),
    );
    const { code, report } = await runJson(apiFiles(forged, checkpoints, [key]));
    expect(code).toBe(1);
    expect(report.chain.valid).toBe(true);
    expect(report.truncation.truncated).toBe(false);
    const bySequence = Object.fromEntries(
      report.checkpoints.map((c: { sequence: number }) => [c.sequence, c]),
    );
    expect(bySequence[2]).toMatchObject({ containment: 'contained', ok: true });
    expect(bySequence[8]).toMatchObject({ containment: 'rewritten', exportHash: forged[7].hash, ok: false });
    expect(report.verdict).toMatch(/^FAILED: chain rewritten: entry 8 has hash [0-9a-f]{12}…/);

    const text = await run(apiFiles(forged, checkpoints, [key]));
    expect(text.stdout).toContain('REWRITTEN');
    expect(text.lastLine).toMatch(/^FAILED: chain rewritten/);
  });

  it('fails a checkpoint signed by a key it was not given (unknown_key), which is not trusted', async () => {
    const entries = buildChain(5);
    const stranger = makeKey();
    // Beyond the export: were it trusted, this would also be truncation.
    const foreign = checkpoint(stranger, { sequence: 9, hash: 'a'.repeat(64) });
    const { code, report } = await runJson(apiFiles(entries, [checkpoint(key, entries[4]), foreign], [key]));
    expect(code).toBe(1);
    const bad = report.checkpoints.find((c: { id: string }) => c.id === foreign.id);
    expect(bad).toMatchObject({ signature: 'unknown_key', containment: 'not_checked', ok: false });
    expect(report.truncation).toEqual({ truncated: false, exportEndsAt: 5, latestCheckpointSequence: 5 });
    expect(report.verdict).toBe(
      `FAILED: checkpoint ${foreign.id} (sequence 9): unknown_key (key ${stranger.keyId})`,
    );
  });

  it('fails a checkpoint whose signature or signed fields were tampered with (bad_signature)', async () => {
    const entries = buildChain(5);
    const good = checkpoint(key, entries[2]);
    const flipped = good.signature[10] === 'A' ? 'B' : 'A';
    const tampered: Checkpoint[] = [
      { ...good, signature: good.signature.slice(0, 10) + flipped + good.signature.slice(11) },
      { ...checkpoint(key, entries[3]), sequence: 9 }, // a checkpoint moved forward: would claim truncation
      { ...checkpoint(key, entries[3]), hash: 'b'.repeat(64) },
      { ...checkpoint(key, entries[3]), organizationId: OTHER_ORG },
      { ...checkpoint(key, entries[3]), signature: good.signature + '==' },
      { ...checkpoint(key, entries[3]), signature: '' },
    ];
    for (const cp of tampered) {
      const { code, report } = await runJson(apiFiles(entries, [cp], [key]));
      expect(code, JSON.stringify(cp)).toBe(1);
      expect(report.checkpoints[0], JSON.stringify(cp)).toMatchObject({
        signature: 'bad_signature',
        containment: 'not_checked',
      });
      expect(report.truncation.truncated).toBe(false);
      expect(report.verdict).toMatch(/^FAILED: checkpoint .*: bad_signature/);
    }
  });

  it('verifies checkpoints of two keys (rotation), given in one keys file or in two', async () => {
    const entries = buildChain(9);
    const older = makeKey('2026-01-01T00:00:00.000Z');
    const newer = makeKey('2026-06-01T00:00:00.000Z');
    const checkpoints = [checkpoint(older, entries[2]), checkpoint(newer, entries[8])];
    const together = await run(apiFiles(entries, checkpoints, [older, newer]));
    expect(together.code).toBe(0);
    expect(together.lastLine).toMatch(/; 2 checkpoints verified, latest at sequence 9$/);

    const dir = workdir();
    const paths = files(dir, {
      'audit.ndjson': ndjson(entries),
      'checkpoints.json': checkpointsEnvelope(checkpoints),
      'old.json': keysEnvelope([older]),
      'new.json': keysEnvelope([newer]),
    });
    const base = ['--export', paths['audit.ndjson'], '--checkpoints', paths['checkpoints.json']];
    const split = await run([...base, '--keys', paths['old.json'], '--keys', paths['new.json']]);
    expect(split.code).toBe(0);
    const onlyNew = await runJson([...base, '--keys', paths['new.json']]);
    expect(onlyNew.code).toBe(1);
    expect(onlyNew.report.checkpoints.map((c: { signature: string }) => c.signature).sort()).toEqual([
      'unknown_key',
      'valid',
    ]);
  });

  it('refuses a key whose keyId is not its thumbprint, and one whose PEM and JWK differ', async () => {
    const entries = buildChain(3);
    const other = makeKey();
    const cp = checkpoint(key, entries[2]);
    const lying = {
      ...key,
      published: { ...key.published, jwk: other.published.jwk, publicKeyPem: other.published.publicKeyPem },
    };
    const { code, report } = await runJson(apiFiles(entries, [cp], [lying as SigningKey]));
    expect(code).toBe(1);
    expect(report.keys[0]).toMatchObject({
      keyId: key.keyId,
      status: 'thumbprint_mismatch',
      thumbprint: other.keyId,
    });
    expect(report.checkpoints[0].signature).toBe('unknown_key');

    const mixed = { ...key, published: { ...key.published, publicKeyPem: other.published.publicKeyPem } };
    const second = await runJson(apiFiles(entries, [cp], [mixed as SigningKey]));
    expect(second.code).toBe(1);
    expect(second.report.keys[0]).toMatchObject({ status: 'invalid' });
    expect(second.report.checkpoints[0].signature).toBe('unknown_key');
  });

  it('accepts every checkpoints form and every keys form', async () => {
    const entries = buildChain(6);
    const checkpoints = [
      checkpoint(key, entries[1]),
      checkpoint(key, entries[3]),
      checkpoint(key, entries[5]),
    ];
    const webhook = (cp: Checkpoint) =>
      JSON.stringify({ type: 'audit.checkpoint', timestamp: '2026-11-25T21:00:00.000Z', data: cp });
    const dir = workdir();
    const paths = files(dir, {
      'audit.ndjson': ndjson(entries),
      'cp-envelope.json': checkpointsEnvelope(checkpoints),
      'cp-array.json': JSON.stringify(checkpoints, null, 2),
      'cp-object.json': JSON.stringify({ checkpoints }),
      'cp-lines.ndjson': checkpoints.map((cp) => JSON.stringify(cp)).join('\n') + '\n',
      'cp-webhooks.ndjson':
        [
          webhook(checkpoints[0]),
          JSON.stringify({ type: 'trace.created', timestamp: '2026-11-25T21:00:00.000Z', data: { id: 'x' } }),
          '',
          webhook(checkpoints[1]),
          JSON.stringify(checkpoints[2]),
        ].join('\n') + '\n',
      'keys-envelope.json': keysEnvelope([key]),
      'keys-object.json': JSON.stringify({ keys: [key.published] }),
      'keys-array.json': JSON.stringify([key.published]),
      'key.pem': key.published.publicKeyPem,
    });
    const checkpointFiles = [
      'cp-envelope.json',
      'cp-array.json',
      'cp-object.json',
      'cp-lines.ndjson',
      'cp-webhooks.ndjson',
    ];
    const keyFiles = ['keys-envelope.json', 'keys-object.json', 'keys-array.json', 'key.pem'];
    for (const cpFile of checkpointFiles) {
      for (const keyFile of keyFiles) {
        const args = [
          '--export',
          paths['audit.ndjson'],
          '--checkpoints',
          paths[cpFile],
          '--keys',
          paths[keyFile],
        ];
        const { code, report } = await runJson(args);
        expect(code, `${cpFile} ${keyFile}`).toBe(0);
        expect(report.checkpoints, `${cpFile} ${keyFile}`).toHaveLength(3);
        expect(report.keys[0].keyId).toBe(key.keyId);
      }
    }
    // The same checkpoints from several files count once.
    const all = checkpointFiles.flatMap((f) => ['--checkpoints', paths[f]]);
    const merged = await run(['--export', paths['audit.ndjson'], ...all, '--keys', paths['key.pem']]);
    expect(merged.code).toBe(0);
    expect(merged.lastLine).toMatch(/; 3 checkpoints verified, latest at sequence 6$/);
    // A single webhook body (one line) is a checkpoints file too.
    const single = files(dir, { 'one.json': webhook(checkpoints[2]) })['one.json'];
    const one = await run([
      '--export',
      paths['audit.ndjson'],
      '--checkpoints',
      single,
      '--keys',
      paths['key.pem'],
    ]);
    expect(one.lastLine).toMatch(/; 1 checkpoint verified, latest at sequence 6$/);
  });

  it('prints exactly one JSON object with --json', async () => {
    const entries = buildChain(4);
    const cp = checkpoint(key, entries[3]);
    const { code, stdout, report } = await runJson(apiFiles(entries, [cp], [key]));
    expect(code).toBe(0);
    expect(stdout.endsWith('}\n')).toBe(true);
    expect(report).toMatchObject({
      ok: true,
      verdict: expect.stringMatching(/^OK: 4 entries, chain intact/),
      export: { entries: 4, organizationId: ORG, firstSequence: 1, lastSequence: 4 },
      chain: { valid: true, head: entries[3].hash, headSequence: 4, brokenAt: null },
      keys: [{ keyId: key.keyId, status: 'ok' }],
      checkpoints: [
        {
          id: cp.id,
          organizationId: ORG,
          sequence: 4,
          hash: cp.hash,
          keyId: key.keyId,
          signature: 'valid',
          sameOrganization: true,
          containment: 'contained',
          ok: true,
        },
      ],
      truncation: { truncated: false, exportEndsAt: 4, latestCheckpointSequence: 4 },
      failures: [],
    });
  });

  it('refuses bad usage and unreadable input with exit 2', async () => {
    const entries = buildChain(2);
    const dir = workdir();
    const paths = files(dir, {
      'audit.ndjson': ndjson(entries),
      'checkpoints.json': checkpointsEnvelope([checkpoint(key, entries[1])]),
      'public-key.json': keysEnvelope([key]),
      'garbage.json': 'not json at all\n',
      'wrong.json': JSON.stringify([{ some: 'thing' }]),
      'api-error.json': JSON.stringify({
        success: false,
        error: { code: 'UNAUTHORIZED', message: 'no token' },
      }),
    });
    const cases: string[][] = [
      [],
      ['--checkpoints', paths['checkpoints.json'], '--keys', paths['public-key.json']],
      ['--export', paths['audit.ndjson'], '--checkpoints', paths['checkpoints.json']],
      ['--export', paths['audit.ndjson'], '--bogus'],
      ['--export', paths['audit.ndjson'], 'extra'],
      ['--export'],
      ['--export', paths['audit.ndjson'], '--export', paths['audit.ndjson']],
      ['--export', join(dir, 'absent.ndjson')],
      ['--export', dir],
      ['--export', paths['audit.ndjson'], '--keys', join(dir, 'absent.json')],
      [
        '--export',
        paths['audit.ndjson'],
        '--checkpoints',
        paths['garbage.json'],
        '--keys',
        paths['public-key.json'],
      ],
      [
        '--export',
        paths['audit.ndjson'],
        '--checkpoints',
        paths['wrong.json'],
        '--keys',
        paths['public-key.json'],
      ],
      ['--export', paths['audit.ndjson'], '--keys', paths['garbage.json']],
      ['--export', paths['audit.ndjson'], '--keys', paths['api-error.json']],
      [
        '--export',
        paths['audit.ndjson'],
        '--checkpoints',
        paths['api-error.json'],
        '--keys',
        paths['public-key.json'],
      ],
    ];
    for (const args of cases) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.lastLine, args.join(' ')).toMatch(/^FAILED: (usage|input): /);
      expect(result.stderr, args.join(' ')).toMatch(/^audit-verify: /);
      const json = await run([...args, '--json']);
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stdout)).toMatchObject({
        ok: false,
        verdict: expect.stringMatching(/^FAILED: /),
      });
    }
    const usage = await run(['--export', paths['audit.ndjson'], '--checkpoints', paths['checkpoints.json']]);
    expect(usage.stderr).toContain('Usage: audit-verify --export');
  });

  it('breaks the chain at a line that is not JSON or not an entry (malformed_line)', async () => {
    const entries = buildChain(5);
    const lines = entries.map((e) => JSON.stringify(e));
    const cases: [string[], number][] = [
      [[...lines.slice(0, 2), '{"sequence": 3, "broken', ...lines.slice(2)], 3],
      [[...lines.slice(0, 2), 'null', ...lines.slice(2)], 3],
      [[...lines.slice(0, 2), '[1,2]', ...lines.slice(2)], 3],
      [[...lines.slice(0, 2), JSON.stringify({ ...entries[2], metadata: undefined })], 3],
      [[...lines.slice(0, 2), JSON.stringify({ ...entries[2], sequence: '3' })], 3],
    ];
    for (const [text, line] of cases) {
      const path = files(workdir(), { 'a.ndjson': text.join('\n') + '\n' })['a.ndjson'];
      const { code, report } = await runJson(['--export', path]);
      expect(code).toBe(1);
      expect(report.chain.brokenAt).toMatchObject({ line, reason: 'malformed_line' });
    }
  });

  it('refuses entries of two organizations (organization_mismatch) and a checkpoint of another one', async () => {
    const ours = buildChain(4);
    const theirs = buildChain(6, OTHER_ORG);
    const mixed = [...ours, theirs[4], theirs[5]];
    const { code, report } = await runJson(apiFiles(mixed, [], [key]));
    expect(code).toBe(1);
    expect(report.chain.brokenAt).toMatchObject({ line: 5, sequence: 5, reason: 'organization_mismatch' });

    const foreign = checkpoint(key, { ...theirs[3], organizationId: OTHER_ORG });
    const other = await runJson(apiFiles(ours, [foreign], [key]));
    expect(other.code).toBe(1);
    expect(other.report.chain.valid).toBe(true);
    expect(other.report.checkpoints[0]).toMatchObject({
      signature: 'valid',
      sameOrganization: false,
      containment: 'not_checked',
      ok: false,
    });
    expect(other.report.verdict).toContain(`organization ${OTHER_ORG}, the export's is ${ORG}`);
  });

  it('reports every failure in one verdict', async () => {
    const entries = buildChain(10);
    const checkpoints = [
      checkpoint(key, entries[9]),
      { ...checkpoint(key, entries[2]), hash: 'c'.repeat(64) },
    ];
    const broken = entries.slice(0, 6).map((e) => (e.sequence === 3 ? { ...e, ip: '192.0.2.1' } : e));
    const { code, report } = await runJson(apiFiles(broken, checkpoints, [key]));
    expect(code).toBe(1);
    expect(report.failures).toHaveLength(3);
    expect(report.verdict).toMatch(
      /^FAILED: chain broken at line 3 \(sequence 3\): hash_mismatch; export truncated: ends at sequence 6, a signed checkpoint is at sequence 10; checkpoint .* \(sequence 3\): bad_signature/,
    );
  });

  it('keeps values from the files on one line: no forged verdict line', async () => {
    const entries = buildChain(3);
    const forged = { ...checkpoint(key, entries[2]), id: 'x\nOK: 3 entries, chain intact\u2028' };
    forged.signature =
      forged.signature.slice(0, 10) + (forged.signature[10] === 'A' ? 'B' : 'A') + forged.signature.slice(11);
    const result = await run(apiFiles(entries, [forged], [key]));
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n').filter((line) => line.startsWith('OK:'))).toEqual([]);
    expect(result.stdout).not.toContain('\u2028');
    expect(result.lastLine).toMatch(
      /^FAILED: checkpoint x\\u000aOK: 3 entries, chain intact\\u2028 \(sequence 3\): bad_signature/,
    );
    const json = await runJson(apiFiles(entries, [forged], [key]));
    expect(json.report.checkpoints[0].id).toBe(forged.id);
  });

  /**
   * A chain of three entries whose second carries `metadata`, hashed (as the service hashes it) from the parsed
   * value, and the export's lines with the second line's text edited by `edit`: the edited line parses to the same
   * value, so its hash still matches, and only the text differs.
   */
  function editedExport(metadata: Record<string, unknown>, edit: (line: string) => string) {
    const entries = rehash(buildChain(3).map((e) => (e.sequence === 2 ? { ...e, metadata } : e)));
    const lines = entries.map((e) => JSON.stringify(e));
    const edited = edit(lines[1]);
    expect(edited).not.toBe(lines[1]);
    // the edit is invisible to JSON.parse: the hash recomputed from the edited line is the entry's hash
    expect(serviceHash(entries[0].hash, JSON.parse(edited) as Entry)).toBe(entries[1].hash);
    const dir = workdir();
    const paths = files(dir, {
      'audit.ndjson': [lines[0], edited, lines[2]].join('\n') + '\n',
      'checkpoints.json': checkpointsEnvelope([checkpoint(key, entries[2])]),
      'public-key.json': keysEnvelope([key]),
    });
    return {
      entries,
      args: [
        '--export',
        paths['audit.ndjson'],
        '--checkpoints',
        paths['checkpoints.json'],
        '--keys',
        paths['public-key.json'],
      ],
    };
  }

  it('refuses a number literal that is not exactly the double it parses to (non_canonical_number)', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ amountCents: 9007199254740992 }, '"amountCents":9007199254740992', '"amountCents":9007199254740993'],
      [{ ratio: 0.1 }, '"ratio":0.1', '"ratio":0.10000000000000000001'],
      [{ ratio: 333333333.3333333 }, '"ratio":333333333.3333333', '"ratio":333333333.33333329'],
      [{ tiny: 0 }, '"tiny":0', '"tiny":1e-400'],
    ];
    for (const [metadata, original, forged] of cases) {
      const { entries, args } = editedExport(metadata, (line) => line.replace(original, forged));
      const { code, report } = await runJson(args);
      expect(code, forged).toBe(1);
      expect(report.chain.brokenAt, forged).toMatchObject({
        line: 2,
        sequence: 2,
        id: entries[1].id,
        reason: 'non_canonical_number',
      });
      expect(report.chain.brokenAt.detail).toContain(forged.split(':')[1]);
      expect(report.chain.headSequence).toBe(1);
      expect(report.verdict).toBe('FAILED: chain broken at line 2 (sequence 2): non_canonical_number');
    }
    // a literal beyond the range of a double: JSON.parse reads Infinity, which has no canonical form at all
    const entries = buildChain(2);
    const line = JSON.stringify(entries[1]).replace('"metadata":{', '"metadata":{"huge":1e400,');
    const path = files(workdir(), { 'a.ndjson': `${JSON.stringify(entries[0])}\n${line}\n` })['a.ndjson'];
    const huge = await runJson(['--export', path]);
    expect(huge.code).toBe(1);
    expect(huge.report.chain.brokenAt).toMatchObject({
      line: 2,
      sequence: 2,
      reason: 'non_canonical_number',
    });
    expect(huge.report.chain.brokenAt.detail).toContain('1e400');
    expect(huge.stderr).toBe('');
  });

  it('accepts other spellings of the same number (1.0, 1000000000000000000000, 1E+21, 0.000001, -0)', async () => {
    const metadata = {
      one: 1,
      big: 1e21,
      bigToo: 1e21,
      small: 1e-6,
      smaller: 1e-7,
      zero: -0,
      list: [1, 1e21],
    };
    const edits: [string, string][] = [
      ['"one":1,', '"one":1.0,'],
      ['"big":1e+21', '"big":1000000000000000000000'],
      ['"bigToo":1e+21', '"bigToo":1E+21'],
      ['"small":0.000001', '"small":0.000001000'],
      ['"smaller":1e-7', '"smaller":0.0000001'],
      ['"zero":0', '"zero":-0.0e5'],
      ['"list":[1,1e+21]', '"list":[ 1e0 , 10e20 ]'],
    ];
    const { args } = editedExport(metadata, (line) =>
      edits.reduce((text, [from, to]) => {
        expect(text).toContain(from);
        return text.replace(from, to);
      }, line),
    );
    const { code, report } = await runJson(args);
    expect(code, report.verdict).toBe(0);
    expect(report.chain).toMatchObject({ valid: true, headSequence: 3 });
    expect(report.checkpoints[0]).toMatchObject({ containment: 'contained', ok: true });
    // the canonical forms themselves, as JSON.stringify writes them, pass too
    const plain = editedExport(metadata, (line) => line.replace('"one":1,', '"one":1.00,'));
    expect((await run(plain.args)).code).toBe(0);
  });

  it('tells exact decimal values apart (isCanonicalNumber)', () => {
    const accepted = [
      '1',
      '1.0',
      '-0',
      '0e999',
      '1e21',
      '1E+21',
      '1000000000000000000000',
      '1e-6',
      '0.000001',
    ];
    for (const token of [...accepted, '5e-324', '1.7976931348623157e308', '0.1', '-2.5'])
      expect(isCanonicalNumber(token), token).toBe(true);
    // a longer expansion of the same double is another decimal value than its shortest form: refused too
    const refused = ['9007199254740993', '0.10000000000000000001', '1e400', '-1e400', '1e-400', '2e-324'];
    for (const token of [...refused, '4.9406564584124654e-324', '0.1000000000000000055511151231257827'])
      expect(isCanonicalNumber(token), token).toBe(false);
  });

  it('refuses an object with a duplicate key, at the top level or nested (duplicate_key)', async () => {
    const top = editedExport({ note: 'benign' }, (line) => line.replace('{', '{"eventType":"benign",'));
    const nested = editedExport({ role: 'viewer' }, (line) =>
      line.replace('"metadata":{"role":"viewer"}', '"metadata":{"role":"admin","role":"viewer"}'),
    );
    const escaped = editedExport({ role: 'viewer' }, (line) =>
      line.replace('"metadata":{"role":"viewer"}', '"metadata":{"role":"admin","\\u0072ole":"viewer"}'),
    );
    for (const [name, { entries, args }] of Object.entries({ top, nested, escaped })) {
      const { code, report } = await runJson(args);
      expect(code, name).toBe(1);
      expect(report.chain.brokenAt, name).toMatchObject({
        line: 2,
        sequence: 2,
        id: entries[1].id,
        reason: 'duplicate_key',
      });
      expect(report.verdict).toBe('FAILED: chain broken at line 2 (sequence 2): duplicate_key');
    }
    // the same key in two different objects is no duplicate
    const apart = editedExport({ a: { role: 'x' }, b: [{ role: 'y' }, { role: 'z' }], role: 'w' }, (line) =>
      line.replace('"role":"w"', '"role" : "w"'),
    );
    expect((await run(apart.args)).code).toBe(0);
  });

  it('refuses a line nested 10,000 levels deep without crashing (malformed_line)', async () => {
    const entries = buildChain(2);
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const line = JSON.stringify(entries[1]).replace('"metadata":{', `"metadata":{"deep":${deep},`);
    const path = files(workdir(), { 'a.ndjson': `${JSON.stringify(entries[0])}\n${line}\n` })['a.ndjson'];
    const { code, stderr, report } = await runJson(['--export', path]);
    expect(code).toBe(1);
    expect(stderr).toBe('');
    expect(report.chain.brokenAt).toMatchObject({ line: 2, sequence: 2, reason: 'malformed_line' });
    expect(report.chain.brokenAt.detail).toMatch(/deeper than 512/);
    const text = await run(['--export', path]);
    expect(text.lastLine).toBe('FAILED: chain broken at line 2 (sequence 2): malformed_line');
  });

  it('fails when --checkpoints is given but holds no checkpoint', async () => {
    const entries = buildChain(3);
    const dir = workdir();
    const paths = files(dir, {
      'audit.ndjson': ndjson(entries),
      'empty.json': checkpointsEnvelope([]),
      'array.json': '[]',
      'other-events.ndjson':
        [
          JSON.stringify({ type: 'trace.created', timestamp: '2026-11-25T21:00:00.000Z', data: { id: 'x' } }),
          JSON.stringify({
            type: 'policy.updated',
            timestamp: '2026-11-25T21:00:01.000Z',
            data: { id: 'y' },
          }),
        ].join('\n') + '\n',
      'public-key.json': keysEnvelope([key]),
    });
    for (const name of ['empty.json', 'array.json', 'other-events.ndjson']) {
      const args = [
        '--export',
        paths['audit.ndjson'],
        '--checkpoints',
        paths[name],
        '--keys',
        paths['public-key.json'],
      ];
      const text = await run(args);
      expect(text.code, name).toBe(1);
      expect(text.lastLine, name).toBe('FAILED: no checkpoint in the checkpoints file(s)');
      const { code, report } = await runJson(args);
      expect(code, name).toBe(1);
      expect(report).toMatchObject({
        ok: false,
        verdict: 'FAILED: no checkpoint in the checkpoints file(s)',
        chain: { valid: true, headSequence: 3 },
        checkpoints: [],
        failures: ['no checkpoint in the checkpoints file(s)'],
      });
    }
    // one file without checkpoints next to one with: the checkpoints were found
    const withOne = files(dir, { 'one.json': checkpointsEnvelope([checkpoint(key, entries[2])]) })[
      'one.json'
    ];
    const both = await run([
      '--export',
      paths['audit.ndjson'],
      '--checkpoints',
      paths['empty.json'],
      '--checkpoints',
      withOne,
      '--keys',
      paths['public-key.json'],
    ]);
    expect(both.code).toBe(0);
  });

  it('prints its help, and the package has no dependencies', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: audit-verify --export audit.ndjson');
    const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8'));
    expect(pkg).toMatchObject({
      name: '@governance/audit-verify',
      type: 'module',
      bin: { 'audit-verify': 'bin/audit-verify.mjs' },
      engines: { node: '>=20' },
    });
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.peerDependencies).toBeUndefined();
    expect(pkg.optionalDependencies).toBeUndefined();
  });
});

describe('ChainVerifier (library)', () => {
  it('verifies a long chain line by line', () => {
    const entries = buildChain(2000);
    const verifier = new ChainVerifier({ watch: [1000] });
    for (const entry of entries) verifier.push(JSON.stringify(entry));
    const result = verifier.result();
    expect(result).toMatchObject({
      valid: true,
      entries: 2000,
      headSequence: 2000,
      head: entries[1999].hash,
    });
    expect(verifier.hashAt(1000)!.hash).toBe(entries[999].hash);
  });
});
