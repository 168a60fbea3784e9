import { execFile } from 'node:child_process';
import { type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { type Registered, TestContext } from './app.js';
import { appendMany, auditEntriesOf } from './audit-entries.js';
import { type Checkpoint, thumbprintOf } from './audit-checkpoints.js';
import { SuiteFixture, useSuite } from './suite.js';

export const AUDIT = '/api/v1/audit';
export const HOOKS = '/api/v1/webhooks';
const BIN = fileURLToPath(new URL('../../packages/audit-verify/bin/audit-verify.mjs', import.meta.url));

export interface CheckpointReport {
  id: string | null;
  sequence: number;
  keyId: string;
  signature: 'valid' | 'bad_signature' | 'unknown_key';
  sameOrganization: boolean | null;
  containment: 'contained' | 'rewritten' | 'beyond_export' | 'missing' | 'not_checked';
  exportHash: string | null;
  ok: boolean;
}

export interface Report {
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

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The last line of stdout: the verdict. */
  verdict: string;
}

/** What an organization downloads: the three bodies as the API answered them, and the files holding them. */
export interface Downloaded {
  exportBody: string;
  checkpointsBody: string;
  keysBody: string;
  checkpoints: Checkpoint[];
  keyIds: string[];
  files: { export: string; checkpoints: string; keys: string };
}

/** An organization's chain with two checkpoints signed through the API and entries after the second. */
export interface Signed {
  org: Registered;
  first: Checkpoint;
  second: Checkpoint;
  head: number;
}

export function runVerifier(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      const lines = stdout.trimEnd().split('\n');
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr, verdict: lines.at(-1) ?? '' });
    });
  });
}

/** The RFC 7638 thumbprint of an Ed25519 public key. */
export const thumbprint = (publicKey: KeyObject) => thumbprintOf(publicKey.export({ format: 'jwk' }).x!);

/**
 * The offline verifier's suites: an application at a fixed time that may deliver webhooks to this machine, and a
 * temporary folder for the downloaded files. Its fields are set before the first test (read them inside a test); its
 * helpers may be taken at once.
 */
export class OfflineVerifySuite extends SuiteFixture {
  ctx!: TestContext;
  dir!: string;
  private fileCounter = 0;

  /** `count` system entries, a second apart, with characters outside ASCII in their metadata. */
  readonly appendMany = (organizationId: string, count: number) =>
    appendMany(this.ctx, organizationId, count, {
      stepMs: 1_000,
      eventType: 'test.offline',
      metadata: (n) => ({ n, note: 'ü€😀' }),
    });

  readonly rowsOf = (organizationId: string) => auditEntriesOf(this.ctx, organizationId);

  readonly writeFile = (name: string, body: string): string => {
    this.fileCounter += 1;
    const file = join(this.dir, `${this.fileCounter}-${name}`);
    writeFileSync(file, body, 'utf8');
    return file;
  };

  readonly signHead = async (token: string): Promise<Checkpoint> => {
    const res = await this.ctx.post(`${AUDIT}/checkpoints`, { token });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().success).toBe(true);
    return res.json().data as Checkpoint;
  };

  readonly serviceVerify = async (token: string, full = true) => {
    const res = await this.ctx.get(`${AUDIT}/verify${full ? '?full=true' : ''}`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  /** GET export, checkpoints and public-key, each body written to its file as received. */
  readonly download = async (token: string): Promise<Downloaded> => {
    const exported = await this.ctx.get(`${AUDIT}/export`, { token });
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const listed = await this.ctx.get(`${AUDIT}/checkpoints`, { token });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json()).toMatchObject({ success: true, pagination: expect.any(Object) });
    // public: no token
    const keys = await this.ctx.get(`${AUDIT}/public-key`);
    expect(keys.statusCode, keys.body).toBe(200);
    expect(keys.json().success).toBe(true);
    return {
      exportBody: exported.body,
      checkpointsBody: listed.body,
      keysBody: keys.body,
      checkpoints: listed.json().data,
      keyIds: keys.json().data.keys.map((k: { keyId: string }) => k.keyId),
      files: {
        export: this.writeFile('audit.ndjson', exported.body),
        checkpoints: this.writeFile('checkpoints.json', listed.body),
        keys: this.writeFile('public-key.json', keys.body),
      },
    };
  };

  /** register (its own entries), 5 entries, checkpoint, 4 entries, checkpoint, 3 entries. */
  readonly chainWithTwoCheckpoints = async (): Promise<Signed> => {
    const org = await this.ctx.register();
    const orgId = org.organization.id;
    await this.appendMany(orgId, 5);
    const first = await this.signHead(org.token);
    await this.appendMany(orgId, 4);
    const second = await this.signHead(org.token);
    await this.appendMany(orgId, 3);
    const rows = await this.rowsOf(orgId);
    const head = rows.length;
    expect(rows.map((r) => r.sequence)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    expect(first.sequence).toBeGreaterThanOrEqual(6);
    expect(second.sequence).toBe(first.sequence + 4);
    expect(head).toBe(second.sequence + 3);
    expect(first.hash).toBe(rows[first.sequence - 1]!.hash);
    expect(second.hash).toBe(rows[second.sequence - 1]!.hash);
    return { org, first, second, head };
  };

  async start(): Promise<void> {
    this.ctx = await this.openApp({
      now: '2026-03-01T09:00:00.000Z',
      config: { webhookAllowPrivateNetworks: true },
    });
    this.dir = await this.open(mkdtempSync(join(tmpdir(), 'audit-offline-verify-')), (dir) =>
      rmSync(dir, { recursive: true, force: true }),
    );
  }
}

/** Runs the verifier twice on the same files, as text and as JSON; both must agree on the exit code and verdict. */
export async function verifyOffline(files: { export: string; checkpoints?: string[]; keys?: string[] }) {
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

export const standard = (d: Downloaded) => ({
  export: d.files.export,
  checkpoints: [d.files.checkpoints],
  keys: [d.files.keys],
});

/** An offline verifier suite, registered in the calling `describe`. */
export const offlineVerifySuite = () => useSuite(new OfflineVerifySuite());
