import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// The service's own hashes: the chain and the content hashes below are built with them, so that the package is
// checked against what the service writes, not against itself.
import { chainHash, GENESIS_HASH } from '../../../libs/platform/src/audit/audit-hash.js';
import {
  contentHashOf as serviceContentHashOf,
  contentStatusOf as serviceContentStatusOf,
  newContentSalt,
  type TraceContent,
} from '../../../libs/governance/src/traces/trace-content.js';
import {
  contentHashOf,
  loadTrace,
  parseTracesText,
  TraceContentCheck,
  type TraceResult,
} from '../src/index.mjs';

const BIN = fileURLToPath(new URL('../bin/audit-verify.mjs', import.meta.url));
const ORG = '65f0000000000000000000a1';
const OTHER_ORG = '65f0000000000000000000b2';

interface Trace extends TraceContent {
  id: string;
  organizationId: string;
  agentId: string;
  status: string;
  contentSalt: string | null;
  erasedAt: string | null;
  createdAt: string;
}

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

/** Content with what canonicalisation must get right: key order, unicode, numbers, nesting, nulls. */
function traceNamed(n: number, over: Partial<Trace> = {}): Trace {
  return {
    id: `66a0000000000000000000${String(n).padStart(2, '0')}`,
    organizationId: ORG,
    agentId: '66a00000000000000000aaaa',
    status: 'approved',
    inputContext: {
      prompt: `Refund for order ${n}? caf\u00e9 \u20ac \ud83d\ude00 "quoted" \\ \n\t`,
      context: { z: 1, a: [1, 'two', null, true, { y: 0.1, x: -0 }], '\u20ac': 1e21, '1': 1e-7 },
    },
    outputDecision: {
      action: 'refund',
      text: 'Within 30 days.',
      toolCalls: [{ name: 'lookup', arguments: {} }],
    },
    metadata: { big: 9007199254740992, ratio: 333333333.3333332, source: 'otlp' },
    rationale: n % 2 ? 'Inside the window' : null,
    contentSalt: newContentSalt(),
    erasedAt: null,
    createdAt: new Date(Date.UTC(2026, 3, 1, 9, 0, n)).toISOString(),
    ...over,
  };
}

/** An audit chain (of ORG) as the service writes it, from the entries' event type, target and metadata. */
function chain(items: { eventType: string; traceId: string; metadata: Record<string, unknown> }[]): Entry[] {
  let prevHash = GENESIS_HASH;
  return items.map((item, i) => {
    const sequence = i + 1;
    const createdAt = new Date(Date.UTC(2026, 3, 1, 10, 0, 0, sequence * 7));
    const content = {
      sequence,
      organizationId: ORG,
      eventType: item.eventType,
      userId: null,
      actor: { type: 'agent' as const, id: '66a00000000000000000aaaa', email: null },
      targetType: 'trace',
      targetId: item.traceId,
      metadata: item.metadata,
      ip: null,
      userAgent: null,
      createdAt,
    };
    const hash = chainHash(prevHash, content);
    const entry: Entry = {
      id: `e${String(sequence).padStart(23, '0')}`,
      ...content,
      createdAt: createdAt.toISOString(),
      prevHash,
      hash,
    };
    prevHash = hash;
    return entry;
  });
}

/** The trace's ingestion entry, its content hash computed by the service. */
const ingested = (trace: Trace) => ({
  eventType: 'trace.approved',
  traceId: trace.id,
  metadata: {
    agentId: trace.agentId,
    confidence: 0.9,
    policyIds: [],
    ...(trace.contentSalt ? { contentHash: serviceContentHashOf(trace.contentSalt, trace) } : {}),
  },
});

/** A CPI correction's entry for the trace's content after it. */
const corrected = (trace: Trace) => ({
  eventType: 'cpi.corrected',
  traceId: trace.id,
  metadata: { action: 'correct', contentHash: serviceContentHashOf(trace.contentSalt!, trace) },
});

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function write(contents: Record<string, string>): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'audit-verify-traces-'));
  dirs.push(dir);
  return Object.fromEntries(
    Object.entries(contents).map(([name, text]) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return [name, path];
    }),
  );
}

const ndjson = (values: unknown[]) => values.map((v) => JSON.stringify(v)).join('\n') + '\n';
/** A trace as GET /traces/:id answers it. */
const answer = (trace: Trace) => JSON.stringify({ success: true, data: trace });

interface Run {
  code: number;
  stdout: string;
  lastLine: string;
  report: { ok: boolean; verdict: string; traces: TraceResult[]; failures: string[] } | null;
}

function run(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { encoding: 'utf8' }, (error, stdout) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      const lines = stdout.trimEnd().split('\n');
      const last = lines[lines.length - 1]!;
      resolve({ code, stdout, lastLine: last, report: args.includes('--json') ? JSON.parse(stdout) : null });
    });
  });
}

describe('content hash (against the service)', () => {
  it('computes the service’s contentHashOf for varied content, salts, nulls and erased content', () => {
    const traces = [
      traceNamed(1),
      traceNamed(2),
      traceNamed(3, { metadata: {}, rationale: '' }),
      traceNamed(4, { inputContext: null, outputDecision: null, metadata: null, rationale: null }),
      traceNamed(5, {
        outputDecision: { text: '\u2028\u2029 \u0001', alternatives: [], n: [0, -1.5, 1e-300] },
      }),
    ];
    for (const trace of traces) {
      const salt = trace.contentSalt!;
      expect(contentHashOf(salt, trace)).toBe(serviceContentHashOf(salt, trace));
      // Members other than the content are not hashed; the content's are.
      expect(contentHashOf(salt, { ...trace, status: 'blocked', id: 'x' })).toBe(contentHashOf(salt, trace));
      expect(contentHashOf(salt, { ...trace, rationale: 'other' })).not.toBe(contentHashOf(salt, trace));
      expect(contentHashOf(newContentSalt(), trace)).not.toBe(contentHashOf(salt, trace));
    }
    // The same content with its keys in another order (as JSON.parse of the API's answer may give them).
    const trace = traceNamed(6);
    const reordered = JSON.parse(JSON.stringify({ rationale: trace.rationale, ...trace }));
    expect(contentHashOf(trace.contentSalt!, reordered)).toBe(
      serviceContentHashOf(trace.contentSalt!, trace),
    );
    expect(() => contentHashOf('abc', trace)).toThrow(/32 hex/);
  });

  it('decides each status as the service’s contentStatusOf does', () => {
    const trace = traceNamed(7);
    const recorded = serviceContentHashOf(trace.contentSalt!, trace);
    const cases: [Trace, string | null][] = [
      [trace, recorded],
      [{ ...trace, outputDecision: { action: 'deny' } }, recorded],
      [{ ...trace, contentSalt: null }, recorded],
      [trace, null],
      [{ ...trace, inputContext: null, contentSalt: null, erasedAt: '2026-04-02T00:00:00.000Z' }, recorded],
    ];
    for (const [t, hash] of cases) {
      const check = new TraceContentCheck([loadTrace(t, 'inline')]);
      if (hash)
        check.observe({ targetType: 'trace', targetId: t.id, sequence: 3, metadata: { contentHash: hash } });
      const [result] = check.results({ organizationId: ORG, headSequence: 3 });
      const service = serviceContentStatusOf(
        { ...t, erasedAt: t.erasedAt ? new Date(t.erasedAt) : null },
        hash,
      );
      expect(result!.status).toBe(service);
    }
  });
});

describe('audit-verify --trace', { timeout: 60_000 }, () => {
  // intact; altered in the database after ingestion; corrected by feedback (latest hash wins); erased; stored before
  // content hashing; salt gone though its entry has a hash.
  const intact = traceNamed(11);
  const altered = traceNamed(12);
  const before = traceNamed(13);
  const after: Trace = {
    ...before,
    outputDecision: { ...before.outputDecision, decision: 'refund', originalDecision: 'deny' },
  };
  const erased = traceNamed(14);
  const legacy = traceNamed(15, { contentSalt: null });
  const saltless = traceNamed(16);
  const entries = chain([
    ingested(intact),
    ingested(altered),
    ingested(before),
    ingested(erased),
    ingested(legacy),
    ingested(saltless),
    corrected(after),
  ]);
  const shown = {
    intact,
    altered: { ...altered, outputDecision: { action: 'deny', text: 'Outside the window.' } },
    after,
    reverted: before,
    erased: {
      ...erased,
      inputContext: null,
      outputDecision: null,
      metadata: null,
      contentSalt: null,
      erasedAt: '2026-04-02T00:00:00.000Z',
    },
    legacy,
    saltless: { ...saltless, contentSalt: null },
  };
  const files = write({
    'audit.ndjson': ndjson(entries),
    ...Object.fromEntries(Object.entries(shown).map(([name, t]) => [`${name}.json`, answer(t)])),
    'all.ndjson': ndjson([shown.intact, shown.after, shown.erased, shown.legacy]),
    'array.json': JSON.stringify([shown.intact, shown.after], null, 2),
    'list.json': JSON.stringify({ success: true, data: [shown.erased], pagination: { page: 1 } }),
  });
  const args = (...traceFiles: string[]) => [
    '--export',
    files['audit.ndjson']!,
    ...traceFiles.flatMap((f) => ['--trace', files[f]!]),
  ];

  it('passes an intact trace (exit 0, intact, the entry that records its hash named)', async () => {
    const text = await run(args('intact.json'));
    expect(text.code, text.stdout).toBe(0);
    expect(text.lastLine).toBe(
      `OK: ${entries.length} entries, chain intact, head ${entries.at(-1)!.hash.slice(0, 12)}… at sequence ` +
        `${entries.length}; no checkpoints given; 1 trace: 1 intact`,
    );
    expect(text.stdout).toContain(
      `trace: ${intact.id}: intact (its content hashes to the hash its entry at sequence 1`,
    );
    const { report } = await run([...args('intact.json'), '--json']);
    expect(report!.traces).toEqual([
      expect.objectContaining({
        id: intact.id,
        status: 'intact',
        recordedHash: serviceContentHashOf(intact.contentSalt!, intact),
        computedHash: serviceContentHashOf(intact.contentSalt!, intact),
        entrySequence: 1,
        entryId: entries[0]!.id,
        entryEventType: 'trace.approved',
        entries: 1,
        inVerifiedChain: true,
        sameOrganization: true,
        ok: true,
      }),
    ]);
  });

  it('fails a trace whose content changed after its entry, while the chain stays intact (exit 1)', async () => {
    const { code, report, lastLine } = await run([...args('altered.json'), '--json']);
    expect(code).toBe(1);
    expect(lastLine).toContain(`FAILED: trace ${altered.id}: content altered (its content hashes to`);
    expect(report!.ok).toBe(false);
    expect(report!.failures).toHaveLength(1);
    expect(report!.traces[0]).toMatchObject({ status: 'altered', entrySequence: 2, ok: false });
    expect(report!.traces[0]!.computedHash).not.toBe(report!.traces[0]!.recordedHash);
    const text = await run(args('altered.json'));
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`trace: ${altered.id}: ALTERED (its content hashes to`);
    expect(text.stdout).toContain('chain: intact');
  });

  it('checks a trace against its latest hash: the content after feedback passes, the one before fails', async () => {
    const now = await run([...args('after.json'), '--json']);
    expect(now.code).toBe(0);
    expect(now.report!.traces[0]).toMatchObject({
      status: 'intact',
      entrySequence: 7,
      entryEventType: 'cpi.corrected',
      entries: 2,
    });
    // The content put back as it was at ingestion matches an older hash only: altered.
    const back = await run([...args('reverted.json'), '--json']);
    expect(back.code).toBe(1);
    expect(back.report!.traces[0]).toMatchObject({ status: 'altered', entrySequence: 7 });
  });

  it('reports erased and unhashed traces without failing; a salt gone under a recorded hash is altered', async () => {
    const { code, report } = await run([...args('erased.json', 'legacy.json', 'saltless.json'), '--json']);
    expect(code).toBe(1);
    expect(report!.traces.map((t) => [t.id, t.status, t.ok])).toEqual([
      [erased.id, 'erased', true],
      [legacy.id, 'unhashed', true],
      [saltless.id, 'altered', false],
    ]);
    expect(report!.traces[1]!.detail).toBe(
      'none of the 1 entries of the export that target it records a content hash',
    );
    expect(report!.traces[2]!.detail).toContain(
      'the trace has no contentSalt, while its entry at sequence 6',
    );
    expect(report!.failures).toEqual([expect.stringContaining(`trace ${saltless.id}: content altered`)]);
    const fine = await run(args('erased.json', 'legacy.json'));
    expect(fine.code).toBe(0);
    expect(fine.lastLine).toMatch(/; 2 traces: 1 erased, 1 unhashed$/);
  });

  it('reads NDJSON of traces, a JSON array, a list answer, and several --trace files', async () => {
    const { code, report } = await run([...args('all.ndjson', 'array.json', 'list.json'), '--json']);
    expect(code, JSON.stringify(report)).toBe(0);
    expect(report!.traces.map((t) => [t.status, t.line])).toEqual([
      ['intact', 1],
      ['intact', 2],
      ['erased', 3],
      ['unhashed', 4],
      ['intact', null],
      ['intact', null],
      ['erased', null],
    ]);
    expect(report!.verdict).toMatch(/; 7 traces: 4 intact, 2 erased, 1 unhashed$/);
  });

  it('fails a trace of another organization, and one with a salt the export has no hash for', async () => {
    const stranger = traceNamed(21, { organizationId: OTHER_ORG });
    const unknown = traceNamed(22);
    const more = write({ 'stranger.json': answer(stranger), 'unknown.json': answer(unknown) });
    const { code, report } = await run([
      '--export',
      files['audit.ndjson']!,
      '--trace',
      more['stranger.json']!,
      '--trace',
      more['unknown.json']!,
      '--json',
    ]);
    expect(code).toBe(1);
    expect(report!.traces.map((t) => [t.status, t.sameOrganization, t.ok])).toEqual([
      ['unhashed', false, false],
      ['unhashed', true, false],
    ]);
    expect(report!.failures).toEqual([
      `trace ${stranger.id}: organization ${OTHER_ORG}, the export's is ${ORG}`,
      `trace ${unknown.id}: has a contentSalt, but no entry of the export records its content hash (an export ` +
        'taken before the trace was stored?)',
    ]);
  });

  it('does not trust a hash recorded after a break in the chain', async () => {
    const broken = entries.map((e) => (e.sequence === 1 ? { ...e, metadata: { ...e.metadata, n: 1 } } : e));
    const f = write({
      'audit.ndjson': ndjson(broken),
      'intact.json': answer(intact),
      'after.json': answer(after),
    });
    const { code, report } = await run([
      '--export',
      f['audit.ndjson']!,
      '--trace',
      f['intact.json']!,
      '--trace',
      f['after.json']!,
      '--json',
    ]);
    expect(code).toBe(1);
    expect(report!.traces.map((t) => [t.status, t.inVerifiedChain])).toEqual([
      ['intact', false],
      ['intact', false],
    ]);
    expect(report!.failures).toContain(
      `trace ${intact.id}: its content hash is recorded at sequence 1, beyond the verified chain`,
    );
  });

  it('refuses a traces file it cannot read as traces (exit 2)', async () => {
    const { contentSalt: _salt, ...noSalt } = intact;
    const bad = write({
      'no-salt.json': answer(noSalt as Trace),
      'duplicate.json': `{"success":true,"data":${JSON.stringify(intact).replace('{', '{"id":"x",')}}`,
      'not-trace.json': JSON.stringify({ id: intact.id }),
      'empty.json': '',
      'broken.ndjson': `${JSON.stringify(intact)}\n{"id":\n`,
    });
    const expected: [string, string][] = [
      ['no-salt.json', `trace ${intact.id} has no contentSalt member`],
      ['duplicate.json', 'duplicate_key'],
      ['not-trace.json', 'not a trace'],
      ['empty.json', 'no trace in it'],
      ['broken.ndjson', 'line 2: not JSON'],
    ];
    for (const [name, message] of expected) {
      const res = await run(['--export', files['audit.ndjson']!, '--trace', bad[name]!]);
      expect(res.code, name).toBe(2);
      expect(res.lastLine, name).toContain('FAILED: input: traces file');
      expect(res.lastLine, name).toContain(message);
    }
    const missing = await run(['--export', files['audit.ndjson']!, '--trace', '/nonexistent/trace.json']);
    expect(missing.code).toBe(2);
    const empty = await run(['--export', files['audit.ndjson']!, '--trace', '']);
    expect(empty.code).toBe(2);
  });
});

describe('parseTracesText', () => {
  it('reads a pretty-printed answer of GET /traces/:id as one document', () => {
    const trace = traceNamed(31);
    const parsed = parseTracesText(JSON.stringify({ success: true, data: trace }, null, 2));
    expect(parsed).toEqual([{ trace: JSON.parse(JSON.stringify(trace)), line: null }]);
  });
});
