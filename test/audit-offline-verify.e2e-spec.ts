import { execFile } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditInput, AuditLog, chainHash, GENESIS_HASH } from '#platform';
import { auditRowsOf } from './support/audit-rows.js';
import { type Registered, TestContext } from './support/app.js';
import { type Checkpoint, signClaims, thumbprintOf } from './support/audit-checkpoints.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The offline verifier (packages/audit-verify) run as a child process on the files an organization downloads from
 * the service: the export, the checkpoints list and the public keys, written exactly as the API returned them.
 */

const AUDIT = '/api/v1/audit';
const HOOKS = '/api/v1/webhooks';
const BIN = fileURLToPath(new URL('../packages/audit-verify/bin/audit-verify.mjs', import.meta.url));

interface CheckpointReport {
  id: string | null;
  sequence: number;
  keyId: string;
  signature: 'valid' | 'bad_signature' | 'unknown_key';
  sameOrganization: boolean | null;
  containment: 'contained' | 'rewritten' | 'beyond_export' | 'missing' | 'not_checked';
  exportHash: string | null;
  ok: boolean;
}

interface Report {
  ok: boolean;
  verdict: string;
  export: {
    entries: number;
    organizationId: string | null;
    firstSequence: number | null;
    lastSequence: number | null;
  };
  chain: {
    valid: boolean;
    head: string | null;
    headSequence: number | null;
    brokenAt: {
      line: number;
      sequence: number | null;
      id: string | null;
      reason: string;
      detail: string;
    } | null;
  };
  keys: { keyId: string; status: string }[];
  checkpoints: CheckpointReport[];
  truncation: { truncated: boolean; exportEndsAt: number; latestCheckpointSequence: number | null };
  failures: string[];
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The last line of stdout: the verdict. */
  verdict: string;
}

/** What an organization downloads: the three bodies as the API answered them, and the files holding them. */
interface Downloaded {
  exportBody: string;
  checkpointsBody: string;
  keysBody: string;
  checkpoints: Checkpoint[];
  keyIds: string[];
  files: { export: string; checkpoints: string; keys: string };
}

/** An organization's chain with two checkpoints signed through the API and entries after the second. */
interface Signed {
  org: Registered;
  first: Checkpoint;
  second: Checkpoint;
  head: number;
}

function runVerifier(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      const lines = stdout.trimEnd().split('\n');
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr, verdict: lines.at(-1) ?? '' });
    });
  });
}

/** The RFC 7638 thumbprint of an Ed25519 public key. */
const thumbprint = (publicKey: KeyObject) => thumbprintOf(publicKey.export({ format: 'jwk' }).x!);

describe('offline audit verification (packages/audit-verify) of real service downloads', () => {
  let ctx: TestContext;
  let audit: AuditLog;
  let dir: string;
  let fileCounter = 0;

  beforeAll(async () => {
    ctx = await TestContext.create({
      now: '2026-03-01T09:00:00.000Z',
      config: { webhookAllowPrivateNetworks: true },
    });
    audit = ctx.app.get(AuditLog);
    dir = mkdtempSync(join(tmpdir(), 'audit-offline-verify-'));
  });
  afterAll(async () => {
    await ctx?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const append = (organizationId: string, eventType: string, extra: Partial<AuditInput> = {}) =>
    audit.append({ organizationId, eventType, actor: { type: 'system', id: null, email: null }, ...extra });

  async function appendMany(organizationId: string, count: number): Promise<void> {
    for (let n = 0; n < count; n++) {
      ctx.clock.advance(1_000);
      await append(organizationId, 'test.offline', { metadata: { n, note: 'ü€😀' } });
    }
  }

  const rowsOf = (organizationId: string) => auditRowsOf(ctx, organizationId);

  function writeFile(name: string, body: string): string {
    fileCounter += 1;
    const file = join(dir, `${fileCounter}-${name}`);
    writeFileSync(file, body, 'utf8');
    return file;
  }

  async function signHead(token: string): Promise<Checkpoint> {
    const res = await ctx.post(`${AUDIT}/checkpoints`, { token });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().success).toBe(true);
    return res.json().data as Checkpoint;
  }

  async function serviceVerify(token: string, full = true) {
    const res = await ctx.get(`${AUDIT}/verify${full ? '?full=true' : ''}`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  /** GET export, checkpoints and public-key, each body written to its file as received. */
  async function download(token: string): Promise<Downloaded> {
    const exported = await ctx.get(`${AUDIT}/export`, { token });
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const listed = await ctx.get(`${AUDIT}/checkpoints`, { token });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json()).toMatchObject({ success: true, pagination: expect.any(Object) });
    // public: no token
    const keys = await ctx.get(`${AUDIT}/public-key`);
    expect(keys.statusCode, keys.body).toBe(200);
    expect(keys.json().success).toBe(true);
    return {
      exportBody: exported.body,
      checkpointsBody: listed.body,
      keysBody: keys.body,
      checkpoints: listed.json().data,
      keyIds: keys.json().data.keys.map((k: { keyId: string }) => k.keyId),
      files: {
        export: writeFile('audit.ndjson', exported.body),
        checkpoints: writeFile('checkpoints.json', listed.body),
        keys: writeFile('public-key.json', keys.body),
      },
    };
  }

  /** Runs the verifier twice on the same files, as text and as JSON; both must agree on the exit code and verdict. */
  async function verifyOffline(files: { export: string; checkpoints?: string[]; keys?: string[] }) {
    const args = ['--export', files.export];
    for (const f of files.checkpoints ?? []) args.push('--checkpoints', f);
    for (const f of files.keys ?? []) args.push('--keys', f);
    const text = await runVerifier(args);
    const json = await runVerifier([...args, '--json']);
    expect(json.stdout.trimEnd().split('\n'), json.stdout).toHaveLength(1);
    const report = JSON.parse(json.stdout) as Report;
    expect(json.code, json.stderr).toBe(text.code);
    expect(report.verdict).toBe(text.verdict);
    return { text, report };
  }

  const standard = (d: Downloaded) => ({
    export: d.files.export,
    checkpoints: [d.files.checkpoints],
    keys: [d.files.keys],
  });

  /** register (its own entries), 5 entries, checkpoint, 4 entries, checkpoint, 3 entries. */
  async function chainWithTwoCheckpoints(): Promise<Signed> {
    const org = await ctx.register();
    const orgId = org.organization.id;
    await appendMany(orgId, 5);
    const first = await signHead(org.token);
    await appendMany(orgId, 4);
    const second = await signHead(org.token);
    await appendMany(orgId, 3);
    const rows = await rowsOf(orgId);
    const head = rows.length;
    expect(rows.map((r) => r.sequence)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    expect(first.sequence).toBeGreaterThanOrEqual(6);
    expect(second.sequence).toBe(first.sequence + 4);
    expect(head).toBe(second.sequence + 3);
    expect(first.hash).toBe(rows[first.sequence - 1]!.hash);
    expect(second.hash).toBe(rows[second.sequence - 1]!.hash);
    return { org, first, second, head };
  }

  it('passes a clean export with two signed checkpoints: exit 0, OK, both valid and contained', async () => {
    const { org, first, second, head } = await chainWithTwoCheckpoints();
    const d = await download(org.token);
    expect(d.exportBody.trimEnd().split('\n')).toHaveLength(head);
    // newest first, exactly the two signed through POST
    expect(d.checkpoints).toEqual([second, first]);
    expect(d.keyIds).toContain(second.keyId);

    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.verdict).toMatch(/^OK: /);
    expect(text.verdict).toContain(`${head} entries, chain intact`);
    expect(text.verdict).toContain(`2 checkpoints verified, latest at sequence ${second.sequence}`);
    expect(text.stderr).toBe('');

    expect(report.ok).toBe(true);
    expect(report.failures).toEqual([]);
    expect(report.export).toMatchObject({
      entries: head,
      organizationId: org.organization.id,
      firstSequence: 1,
      lastSequence: head,
    });
    expect(report.chain).toMatchObject({ valid: true, headSequence: head, brokenAt: null });
    expect(report.keys.every((k) => k.status === 'ok')).toBe(true);
    expect(report.checkpoints).toHaveLength(2);
    for (const checkpoint of [first, second]) {
      expect(report.checkpoints.find((c) => c.id === checkpoint.id)).toMatchObject({
        sequence: checkpoint.sequence,
        keyId: checkpoint.keyId,
        signature: 'valid',
        sameOrganization: true,
        containment: 'contained',
        exportHash: checkpoint.hash,
        ok: true,
      });
    }
    expect(report.truncation).toEqual({
      truncated: false,
      exportEndsAt: head,
      latestCheckpointSequence: second.sequence,
    });
    // the service agrees
    expect(await serviceVerify(org.token)).toMatchObject({ valid: true, totalEntries: head });
  });

  it('finds an entry altered after the checkpoints: exit 1, hash_mismatch at its sequence', async () => {
    const { org, first, second } = await chainWithTwoCheckpoints();
    const orgId = org.organization.id;
    const altered = 3;
    const rows = await rowsOf(orgId);
    await ctx.db.db.execute(
      sql`update audit_entries set metadata = '{"n":999}' where organization_id = ${orgId} and sequence = ${altered}`,
    );
    expect((await serviceVerify(org.token)).brokenAt).toEqual({
      sequence: altered,
      id: rows[altered - 1]!.id,
      reason: 'hash_mismatch',
    });

    const d = await download(org.token);
    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout).toBe(1);
    expect(text.verdict).toMatch(/^FAILED: /);
    expect(text.verdict).toContain(`chain broken at line ${altered} (sequence ${altered}): hash_mismatch`);
    expect(report.ok).toBe(false);
    expect(report.chain.valid).toBe(false);
    expect(report.chain.brokenAt).toMatchObject({
      line: altered,
      sequence: altered,
      id: rows[altered - 1]!.id,
      reason: 'hash_mismatch',
    });
    expect(report.chain.headSequence).toBe(altered - 1);
    // the stored hashes were left alone: the checkpoints' hashes are still at their sequences
    for (const c of report.checkpoints)
      expect(c).toMatchObject({ signature: 'valid', containment: 'contained' });
    expect(report.checkpoints.map((c) => c.sequence).sort((a, b) => a - b)).toEqual([
      first.sequence,
      second.sequence,
    ]);
    expect(report.truncation.truncated).toBe(false);
  });

  it('finds a deleted middle entry: exit 1, sequence_gap at the next sequence', async () => {
    const { org, head } = await chainWithTwoCheckpoints();
    const orgId = org.organization.id;
    const dropped = 4;
    const rows = await rowsOf(orgId);
    await ctx.db.db.execute(
      sql`delete from audit_entries where organization_id = ${orgId} and sequence = ${dropped}`,
    );

    const d = await download(org.token);
    expect(d.exportBody.trimEnd().split('\n')).toHaveLength(head - 1);
    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout).toBe(1);
    expect(text.verdict).toMatch(/^FAILED: /);
    expect(text.verdict).toContain(`chain broken at line ${dropped} (sequence ${dropped + 1}): sequence_gap`);
    expect(report.ok).toBe(false);
    expect(report.chain.brokenAt).toMatchObject({
      line: dropped,
      sequence: dropped + 1,
      id: rows[dropped]!.id,
      reason: 'sequence_gap',
    });
    expect(report.chain.brokenAt!.detail).toContain(`expected sequence ${dropped}, found ${dropped + 1}`);
    expect(report.export.lastSequence).toBe(head);
    expect(report.truncation.truncated).toBe(false);
  });

  it('finds a cut tail against the latest signed checkpoint: chain intact, truncated, exit 1', async () => {
    const { org, first, second, head } = await chainWithTwoCheckpoints();
    const orgId = org.organization.id;
    // the tail from two entries before the second checkpoint: the chain now ends before it
    const endsAt = second.sequence - 2;
    await ctx.db.db.execute(
      sql`delete from audit_entries where organization_id = ${orgId} and sequence > ${endsAt}`,
    );
    expect((await rowsOf(orgId)).length).toBe(endsAt);
    expect(head - endsAt).toBe(5);
    // the service finds it too, against its own highest checkpoint
    expect((await serviceVerify(org.token)).brokenAt).toMatchObject({
      sequence: second.sequence,
      reason: 'truncated',
    });

    const d = await download(org.token);
    expect(d.checkpoints.map((c) => c.sequence)).toEqual([second.sequence, first.sequence]);
    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout).toBe(1);
    expect(text.verdict).toBe(
      `FAILED: export truncated: ends at sequence ${endsAt}, a signed checkpoint is at sequence ${second.sequence}`,
    );
    expect(report.ok).toBe(false);
    // what is left is a valid chain: only the checkpoint shows the cut
    expect(report.chain).toMatchObject({ valid: true, headSequence: endsAt, brokenAt: null });
    expect(report.truncation).toEqual({
      truncated: true,
      exportEndsAt: endsAt,
      latestCheckpointSequence: second.sequence,
    });
    const byId = (id: string) => report.checkpoints.find((c) => c.id === id);
    expect(byId(second.id)).toMatchObject({
      signature: 'valid',
      containment: 'beyond_export',
      exportHash: null,
      ok: false,
    });
    expect(byId(first.id)).toMatchObject({ signature: 'valid', containment: 'contained', ok: true });
  });

  it('finds a recomputed chain: intact in itself, but the signed checkpoints are rewritten, exit 1', async () => {
    const { org, first, second, head } = await chainWithTwoCheckpoints();
    const orgId = org.organization.id;
    const altered = 3;
    await ctx.db.db.execute(
      sql`update audit_entries set metadata = '{"n":"rewritten"}' where organization_id = ${orgId} and sequence = ${altered}`,
    );
    // recompute every link and hash from the altered entry on, with the service's own hash
    const rows = await rowsOf(orgId);
    let prevHash = rows[altered - 2]!.hash;
    for (const row of rows.slice(altered - 1)) {
      const hash = chainHash(prevHash, row);
      await ctx.db.db.execute(
        sql`update audit_entries set prev_hash = ${prevHash}, hash = ${hash} where id = ${row.id}`,
      );
      prevHash = hash;
    }
    const rewritten = await rowsOf(orgId);
    expect(rewritten[0]!.prevHash).toBe(GENESIS_HASH);
    for (let i = 1; i < rewritten.length; i++) expect(rewritten[i]!.prevHash).toBe(rewritten[i - 1]!.hash);
    expect(rewritten[first.sequence - 1]!.hash).not.toBe(first.hash);
    expect(rewritten[second.sequence - 1]!.hash).not.toBe(second.hash);

    // The service's full verification: invalid only because of its highest checkpoint.
    expect(await serviceVerify(org.token)).toMatchObject({
      valid: false,
      totalEntries: head,
      verifiedFrom: 1,
      brokenAt: {
        sequence: second.sequence,
        id: rows[second.sequence - 1]!.id,
        reason: 'checkpoint_mismatch',
      },
    });
    // nor will it sign the rewritten head
    const refused = await ctx.post(`${AUDIT}/checkpoints`, { token: org.token });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({ success: false, code: 'AUDIT_CHAIN_INVALID' });

    const d = await download(org.token);
    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout).toBe(1);
    expect(text.verdict).toMatch(/^FAILED: chain rewritten: entry /);
    expect(report.ok).toBe(false);
    expect(report.chain).toMatchObject({ valid: true, headSequence: head, brokenAt: null });
    expect(report.truncation.truncated).toBe(false);
    for (const checkpoint of [first, second]) {
      expect(report.checkpoints.find((c) => c.id === checkpoint.id)).toMatchObject({
        signature: 'valid',
        containment: 'rewritten',
        exportHash: rewritten[checkpoint.sequence - 1]!.hash,
        ok: false,
      });
      expect(report.failures).toContainEqual(
        expect.stringMatching(new RegExp(`^chain rewritten: entry ${checkpoint.sequence} has hash `)),
      );
    }
    // the chain alone, without the checkpoints, passes: only the signed checkpoints reveal the rewrite
    const alone = await runVerifier(['--export', d.files.export]);
    expect(alone.code, alone.stdout).toBe(0);
    expect(alone.verdict).toMatch(/^OK: /);
  });

  it('refuses a checkpoint signed by another key: unknown_key with its own keyId, bad_signature with the real one', async () => {
    const { org, second, head } = await chainWithTwoCheckpoints();
    const d = await download(org.token);
    const real = d.checkpoints.find((c) => c.id === second.id)!;
    expect(real).toEqual(second);
    const listBody = JSON.parse(d.checkpointsBody) as { data: Checkpoint[] };

    const other = generateKeyPairSync('ed25519');
    const otherKeyId = thumbprint(other.publicKey);
    expect(d.keyIds).not.toContain(otherKeyId);
    const resigned: Checkpoint = {
      ...real,
      keyId: otherKeyId,
      signature: signClaims(real, otherKeyId, other.privateKey),
    };
    const forged: Checkpoint = { ...real, signature: signClaims(real, real.keyId, other.privateKey) };
    expect(forged.signature).not.toBe(real.signature);

    // 1. Re-signed with the other key under its own key id: no key of the service has that id.
    const unknownFile = writeFile(
      'checkpoints-unknown.json',
      JSON.stringify({ ...listBody, data: [resigned] }),
    );
    const unknown = await verifyOffline({
      export: d.files.export,
      checkpoints: [unknownFile],
      keys: [d.files.keys],
    });
    expect(unknown.text.code, unknown.text.stdout).toBe(1);
    expect(unknown.text.verdict).toBe(
      `FAILED: checkpoint ${real.id} (sequence ${real.sequence}): unknown_key (key ${otherKeyId})`,
    );
    expect(unknown.report.ok).toBe(false);
    expect(unknown.report.chain.valid).toBe(true);
    expect(unknown.report.checkpoints).toEqual([
      expect.objectContaining({
        id: real.id,
        keyId: otherKeyId,
        signature: 'unknown_key',
        containment: 'not_checked',
        ok: false,
      }),
    ]);
    // an untrusted checkpoint pins nothing
    expect(unknown.report.truncation).toEqual({
      truncated: false,
      exportEndsAt: head,
      latestCheckpointSequence: null,
    });

    // Control: the re-signed checkpoint is well formed; with the other key published beside the service's, it verifies.
    const otherKeys = writeFile(
      'other-key.json',
      JSON.stringify({
        keys: [
          {
            keyId: otherKeyId,
            algorithm: 'Ed25519',
            publicKeyPem: other.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
            jwk: { kty: 'OKP', crv: 'Ed25519', x: other.publicKey.export({ format: 'jwk' }).x },
            createdAt: ctx.clock.now().toISOString(),
          },
        ],
      }),
    );
    const control = await verifyOffline({
      export: d.files.export,
      checkpoints: [unknownFile],
      keys: [d.files.keys, otherKeys],
    });
    expect(control.text.code, control.text.stdout).toBe(0);
    expect(control.report.checkpoints[0]).toMatchObject({ signature: 'valid', containment: 'contained' });

    // 2. The real key id, a signature by the other key.
    const badFile = writeFile('checkpoints-bad.json', JSON.stringify({ ...listBody, data: [forged] }));
    const bad = await verifyOffline({ export: d.files.export, checkpoints: [badFile], keys: [d.files.keys] });
    expect(bad.text.code, bad.text.stdout).toBe(1);
    expect(bad.text.verdict).toBe(
      `FAILED: checkpoint ${real.id} (sequence ${real.sequence}): bad_signature (key ${real.keyId})`,
    );
    expect(bad.report.checkpoints).toEqual([
      expect.objectContaining({
        id: real.id,
        keyId: real.keyId,
        signature: 'bad_signature',
        containment: 'not_checked',
        ok: false,
      }),
    ]);
    // a forged copy beside the genuine list: the genuine ones verify, the forged one fails the run
    const both = await verifyOffline({
      export: d.files.export,
      checkpoints: [d.files.checkpoints, badFile],
      keys: [d.files.keys],
    });
    expect(both.text.code, both.text.stdout).toBe(1);
    expect(both.report.checkpoints.map((c) => c.signature).sort()).toEqual([
      'bad_signature',
      'valid',
      'valid',
    ]);
    expect(both.report.failures).toEqual([
      `checkpoint ${real.id} (sequence ${real.sequence}): bad_signature (key ${real.keyId})`,
    ]);
  });

  it('accepts the checkpoints as the audit.checkpoint webhook delivered them (NDJSON of the bodies)', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const org = await ctx.register();
      const orgId = org.organization.id;
      const hook = await ctx.post(HOOKS, {
        token: org.token,
        body: { url: receiver.url, events: ['audit.checkpoint'] },
      });
      expect(hook.statusCode, hook.body).toBe(201);
      await appendMany(orgId, 3);
      const first = await signHead(org.token);
      await receiver.waitFor(1);
      await appendMany(orgId, 2);
      const second = await signHead(org.token);
      await receiver.waitFor(2);
      // signing the same head again answers its checkpoint and sends nothing
      expect(await signHead(org.token)).toEqual(second);
      await appendMany(orgId, 1);

      expect(receiver.received.map((r) => r.json.type)).toEqual(['audit.checkpoint', 'audit.checkpoint']);
      expect(receiver.received.map((r) => r.json.data)).toEqual([first, second]);
      const webhookFile = writeFile(
        'webhook-checkpoints.ndjson',
        receiver.received.map((r) => r.body).join('\n'),
      );

      const d = await download(org.token);
      // the webhook copies alone
      const hooked = await verifyOffline({
        export: d.files.export,
        checkpoints: [webhookFile],
        keys: [d.files.keys],
      });
      expect(hooked.text.code, hooked.text.stdout).toBe(0);
      expect(hooked.text.verdict).toMatch(/^OK: /);
      expect(hooked.report.checkpoints.map((c) => [c.id, c.signature, c.containment])).toEqual([
        [first.id, 'valid', 'contained'],
        [second.id, 'valid', 'contained'],
      ]);
      // with the API's list too: the same checkpoints count once
      const together = await verifyOffline({
        export: d.files.export,
        checkpoints: [d.files.checkpoints, webhookFile],
        keys: [d.files.keys],
      });
      expect(together.text.code, together.text.stdout).toBe(0);
      expect(together.report.checkpoints).toHaveLength(2);

      // NDJSON built from the list body, one webhook-shaped line per checkpoint, among other event types
      const built = [
        JSON.stringify({
          type: 'trace.flagged',
          timestamp: ctx.clock.now().toISOString(),
          data: { traceId: 'x' },
        }),
        ...d.checkpoints.map((data) =>
          JSON.stringify({ type: 'audit.checkpoint', timestamp: data.createdAt, data }),
        ),
      ].join('\n');
      const builtRun = await verifyOffline({
        export: d.files.export,
        checkpoints: [writeFile('built-webhook.ndjson', `${built}\n`)],
        keys: [d.files.keys],
      });
      expect(builtRun.text.code, builtRun.text.stdout).toBe(0);
      expect(builtRun.report.checkpoints).toHaveLength(2);

      // the webhook copies kept, the tail cut later: the kept copies show it
      await ctx.db.db.execute(
        sql`delete from audit_entries where organization_id = ${orgId} and sequence >= ${second.sequence}`,
      );
      const cut = await download(org.token);
      const after = await verifyOffline({
        export: cut.files.export,
        checkpoints: [webhookFile],
        keys: [d.files.keys],
      });
      expect(after.text.code, after.text.stdout).toBe(1);
      expect(after.text.verdict).toBe(
        `FAILED: export truncated: ends at sequence ${second.sequence - 1}, a signed checkpoint is at sequence ${second.sequence}`,
      );
    } finally {
      await receiver.close();
    }
  });
});
