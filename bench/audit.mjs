// Audit log benchmark (PostgreSQL): one organization whose chain holds AUDIT_BENCH_ENTRIES trace entries (default
// 1,000,000) after its own (registration, agents), written with SQL in batches of 10,000 (the non-primary indexes of
// audit_entries dropped during the load and rebuilt after it, then VACUUM ANALYZE), each entry's hash computed from the
// exact bytes the service hashes, and the raw SHA-256 floor over the same bytes measured in the same run
// (bench/audit-seed.mjs). Then measures: GET /audit/verify?full=true (wall clock, entries/s, ratio to the one-shot
// floor, the service's peak RSS during it, VmHWM reset through /proc/<pid>/clear_refs), the CLI's audit:verify --full
// (and again with a 128 MiB heap cap, which it passes at the default size only if its memory does not grow with the
// chain), PostgreSQL's own floor (COPY of the rows verification reads to /dev/null on the server), GET /audit/verify
// after 1,000 more entries (incremental: after the verified prefix), GET /audit/verify?content=true (every trace's
// content against the content hash its entry records, CONTENT_ALTERED traces altered with SQL first: traces/s, peak
// RSS), GET /audit/export streamed and counted (entries/s, peak RSS) and GET /audit page 1 with each filter (p50/p99 of
// 50 requests after 3 warm-ups). Every seeded entry has its trace (content and salt) and records its content hash.
// Prints figures; asserts only correctness (a valid chain of the expected length, an export of every entry). A step
// that fails is reported and the next one runs; the run then exits 1. Needs PostgreSQL: DATABASE_URL (default the local
// server); the data goes to a scratch database that is dropped afterwards. AUDIT_BENCH_ENTRIES.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { appendEntries, Incorrect, seedChain } from './audit-seed.mjs';
import {
  BENCH_AUDIT_SIGNING_KEY,
  procStatusKib,
  seedOrganization,
  startOnPostgres,
  startService,
  timedGet,
  timeRepeated,
} from './support.mjs';

const ENTRIES = Number(process.env.AUDIT_BENCH_ENTRIES ?? 1_000_000);
const INCREMENTAL = 1_000;
/** Traces whose content is changed with SQL before the content check, which must find exactly them. */
const CONTENT_ALTERED = 3;
const AGENTS = 10;
const REPEAT = 50;
const WARMUP = 3;
const TARGETS = { ratio: 0.5, exportPerSecond: 100_000, page1P50Ms: 20 };
// As startService sets it: the CLI must boot with the service's settings.
const JWT_SECRET = 'bench-secret-'.padEnd(48, 'x');
// Production refuses to start without an audit signing key (checkpoints are signed): one Ed25519 key for the run,
// given to the service and to the CLI alike.
const AUDIT_SIGNING_KEY = BENCH_AUDIT_SIGNING_KEY;
const CLI = join('dist', 'apps', 'cli', 'src', 'main.js');
/**
 * The heap cap of the CLI run that shows verification's memory does not grow with the chain. The CLI boots the whole
 * application without HTTP, whose modules alone keep about 60 MB of heap (57 MB once imported): a cap of 64 MiB left
 * too little room and failed now and then on a chain of 2,000 entries. 128 MiB is still a quarter of a million
 * entries' bytes (525 MB), which a verifier that kept the chain would need many times over.
 */
const CAPPED_HEAP_MIB = 128;
/** The same for a second instance of the service (its modules take a heap of their own). */
const SERVICE_HEAP_MIB = 128;

if (!Number.isInteger(ENTRIES) || ENTRIES < 1)
  throw new Error('AUDIT_BENCH_ENTRIES must be a positive integer');

const n = (value) => Math.round(value).toLocaleString('en');
const secs = (ms) => `${(ms / 1000).toFixed(2)} s`;
/** The CLI's entries/s less its boot, or why there is none. */
const netText = (perSecond, floor) =>
  perSecond === null
    ? 'no figure (the verification took less than the boot varies by)'
    : `${n(perSecond)} entries/s, ratio ${(perSecond / floor).toFixed(2)}`;
const mb = (kib) => `${(kib / 1024).toFixed(0)} MB`;

/**
 * Resets the peak RSS of a process (VmHWM) to its current RSS: writing 5 to /proc/<pid>/clear_refs (Linux). Returns
 * whether it did; if not, a peak read afterwards is the peak since the process started.
 */
function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch (err) {
    console.log(
      `  (could not reset the peak RSS: ${err.code ?? err.message}; the peak shown is since start)`,
    );
    return false;
  }
}

/** Every step reports its own failure and lets the next one run, except a correctness failure. */
async function step(name, fn) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Incorrect) {
      console.log(`  ${name}: INCORRECT: ${err.message}`);
      throw err;
    }
    console.log(`  ${name}: FAILED: ${err.message}`);
    process.exitCode = 1;
    return { failed: err.message };
  }
}

const { server, base, db, stop } = await startOnPostgres({ AUDIT_SIGNING_KEY });
const cliDataDir = mkdtempSync(join(tmpdir(), 'gov-bench-cli-'));
const summary = {};

try {
  // Agents (their creation is audited too: part of the entries before the seeded ones).
  const { userId, orgId, auth, agentIds } = await seedOrganization(
    { base, db },
    { prefix: 'bench-audit', plan: 'enterprise', agents: AGENTS, agentName: (a) => `support-agent-${a}` },
  );

  // 2. Seed, continuing the chain after the organization's entries; the entries end a few seconds before now.
  const { chain, midMs, preExisting, indexes, seeding, loadMs, indexMs, vacuumMs } = await seedChain(
    db,
    orgId,
    agentIds,
    ENTRIES,
  );
  const chainLength = preExisting + ENTRIES;
  const floor = {
    oneShot: ENTRIES / (seeding.oneShotMs / 1000),
    stream: ENTRIES / (seeding.streamMs / 1000),
  };
  console.log(
    `seeded ${n(ENTRIES)} audit entries after ${n(preExisting)} of the organization's own in ` +
      `${secs(loadMs)} (building the entries and their bytes ${secs(seeding.buildMs)}, inserts ` +
      `${secs(seeding.insertMs)}); ${indexes} indexes rebuilt in ${secs(indexMs)}; vacuum analyze ` +
      `${secs(vacuumMs)}`,
  );
  console.log(
    `SHA-256 floor over the same ${n(seeding.bytes)} bytes (${(seeding.bytes / ENTRIES).toFixed(0)} per entry): ` +
      `crypto.hash ${n(floor.oneShot)} entries/s (${secs(seeding.oneShotMs)}), createHash ` +
      `${n(floor.stream)} entries/s (${secs(seeding.streamMs)})`,
  );
  summary.seed = { ms: loadMs, indexMs, vacuumMs };
  summary.floor = floor;

  const getJson = (path) => timedGet(base, path, auth);

  // 4 and 5. Full verification over HTTP, with the service's peak RSS.
  summary.verify = await step('GET /audit/verify?full=true', async () => {
    const rssBefore = procStatusKib(server.pid, 'VmRSS');
    const reset = resetPeakRss(server.pid);
    const { ms, body } = await getJson('/api/v1/audit/verify?full=true');
    const peak = procStatusKib(server.pid, 'VmHWM');
    const result = body.data ?? body;
    if (result.valid !== true)
      throw new Incorrect(`GET /audit/verify?full=true: not valid: ${JSON.stringify(result)}`);
    if (result.totalEntries !== chainLength)
      throw new Incorrect(
        `GET /audit/verify?full=true: totalEntries ${result.totalEntries}, expected ${chainLength} ` +
          `(${ENTRIES} seeded after ${preExisting})`,
      );
    const perSecond = result.totalEntries / (ms / 1000);
    console.log(
      `GET /audit/verify?full=true: valid, ${n(result.totalEntries)} entries in ${secs(ms)}: ${n(perSecond)} ` +
        `entries/s, ratio to the crypto.hash floor ${(perSecond / floor.oneShot).toFixed(2)} (target ≥ ` +
        `${TARGETS.ratio}); verifiedFrom ${result.verifiedFrom ?? '(absent)'}; service RSS ${mb(rssBefore)} before, ` +
        `peak ${mb(peak)}${reset ? '' : ' (peak since start)'}`,
    );
    return { ms, perSecond, peak, rssBefore, reset };
  });

  // 5. The CLI's verification (its boot measured apart on an organization without entries).
  const cli = async (args, nodeArgs = []) => {
    const started = performance.now();
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [...nodeArgs, CLI, ...args], {
        env: {
          ...process.env,
          DATABASE_URL: server.databaseUrl,
          DATA_DIR: cliDataDir,
          NODE_ENV: 'production',
          JWT_SECRET,
          AUDIT_SIGNING_KEY,
          LOG_LEVEL: 'warn',
        },
        maxBuffer: 64 * 1024 * 1024,
      });
      const ms = performance.now() - started;
      return { ms, result: JSON.parse(stdout.slice(stdout.indexOf('{'))) };
    } catch (err) {
      throw new Error(
        `${args.join(' ')}: exit ${err.code}: ${(err.stderr || err.message).trim().slice(0, 300)}`,
      );
    }
  };
  summary.cli = await step('CLI audit:verify --full', async () => {
    const full = ['--full'];
    const empty = await cli(['audit:verify', '0'.repeat(24), ...full]);
    const { ms, result } = await cli(['audit:verify', orgId, ...full]);
    if (result.valid !== true)
      throw new Incorrect(`CLI audit:verify --full: not valid: ${JSON.stringify(result)}`);
    if (result.totalEntries !== chainLength)
      throw new Incorrect(
        `CLI audit:verify --full: totalEntries ${result.totalEntries}, expected ${chainLength}`,
      );
    const perSecond = result.totalEntries / (ms / 1000);
    // A boot varies by a tenth or more from run to run: a verification shorter than that has no figure of its own.
    const netMs = ms - empty.ms;
    const netPerSecond = netMs > empty.ms / 10 ? result.totalEntries / (netMs / 1000) : null;
    console.log(
      `CLI ${['audit:verify', ...full].join(' ')}: valid, ${n(result.totalEntries)} entries in ${secs(ms)} (the process, boot ` +
        `included): ${n(perSecond)} entries/s, ratio ${(perSecond / floor.oneShot).toFixed(2)}; less the boot and ` +
        `exit of a run on an empty chain (${secs(empty.ms)}): ${netText(netPerSecond, floor.oneShot)}`,
    );
    // Memory that does not grow with the chain: the same verification in a process whose heap is capped.
    const capped = await cli(['audit:verify', orgId, ...full], [`--max-old-space-size=${CAPPED_HEAP_MIB}`]);
    if (capped.result.valid !== true || capped.result.totalEntries !== chainLength)
      throw new Incorrect(`CLI audit:verify --full with a capped heap: ${JSON.stringify(capped.result)}`);
    console.log(
      `CLI audit:verify --full with --max-old-space-size=${CAPPED_HEAP_MIB}: valid, ${n(chainLength)} entries in ` +
        `${secs(capped.ms)}`,
    );
    return { ms, perSecond, netPerSecond, bootMs: empty.ms, cappedMs: capped.ms };
  });

  // The database's own floor: PostgreSQL writing the rows verification reads (the same columns, in order) to
  // /dev/null on the server, with no client at all (needs a superuser, as the local server's postgres is).
  summary.dbFloor = await step('PostgreSQL floor (COPY of the same rows to /dev/null)', async () => {
    const started = performance.now();
    await db.query(
      `copy (select sequence::text as seq, id, event_type, user_id, actor::text, target_type, target_id,
         metadata::text, ip, user_agent, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
         prev_hash, hash from audit_entries where organization_id = $1 order by audit_entries.sequence)
       to '/dev/null'`.replace('$1', `'${orgId}'`),
    );
    const ms = performance.now() - started;
    const perSecond = chainLength / (ms / 1000);
    console.log(
      `PostgreSQL alone writing the verification's rows to /dev/null: ${n(perSecond)} rows/s (${secs(ms)}), ` +
        `${(perSecond / floor.oneShot).toFixed(2)} of the crypto.hash floor`,
    );
    return { ms, perSecond };
  });

  // 6. Incremental verification after 1,000 more entries (the last verification left its checkpoint at the head).
  summary.incremental = await step('GET /audit/verify (incremental)', async () => {
    await appendEntries(db, chain, INCREMENTAL, orgId, agentIds);
    const { ms, body } = await getJson('/api/v1/audit/verify');
    const result = body.data ?? body;
    const expected = chainLength + INCREMENTAL;
    if (result.valid !== true) throw new Incorrect(`GET /audit/verify: not valid: ${JSON.stringify(result)}`);
    if (result.totalEntries !== expected)
      throw new Incorrect(`GET /audit/verify: totalEntries ${result.totalEntries}, expected ${expected}`);
    const from = result.verifiedFrom;
    const checked = typeof from === 'number' ? result.totalEntries - from + 1 : result.totalEntries;
    console.log(
      `GET /audit/verify after ${n(INCREMENTAL)} more: ${ms.toFixed(1)} ms, verifiedFrom ` +
        `${typeof from === 'number' ? n(from) : '(absent)'} of ${n(result.totalEntries)} ` +
        `(${n(checked)} entries read: ${n(checked / (ms / 1000))}/s)`,
    );
    return { ms, verifiedFrom: from, checked };
  });

  // 6b. The content check: every trace hashed again against its entry's content hash (a full pass over the traces,
  // whatever the verified prefix), after a few traces were changed in the database.
  summary.content = await step('GET /audit/verify?content=true', async () => {
    const traces = ENTRIES + INCREMENTAL;
    const { rows: altered } = await db.query(
      `update traces set output_decision = output_decision || '{"text": "Altered in the database."}'
        where id in (select id from traces where organization_id = $1 order by id limit $2) returning id`,
      [orgId, CONTENT_ALTERED],
    );
    const rssBefore = procStatusKib(server.pid, 'VmRSS');
    const reset = resetPeakRss(server.pid);
    const { ms, body } = await getJson('/api/v1/audit/verify?content=true');
    const peak = procStatusKib(server.pid, 'VmHWM');
    const result = body.data ?? body;
    if (result.valid !== true)
      throw new Incorrect(`GET /audit/verify?content=true: not valid: ${JSON.stringify(result)}`);
    const expectedIds = altered.map((r) => r.id).sort();
    if (
      result.contentChecked !== traces ||
      result.contentAltered !== CONTENT_ALTERED ||
      JSON.stringify([...(result.contentAlteredIds ?? [])].sort()) !== JSON.stringify(expectedIds) ||
      result.contentErased !== 0 ||
      result.contentUnhashed !== 0
    )
      throw new Incorrect(
        `GET /audit/verify?content=true: expected ${traces} checked and ${CONTENT_ALTERED} altered ` +
          `(${expectedIds.join(', ')}): ${JSON.stringify(result)}`,
      );
    const perSecond = result.contentChecked / (ms / 1000);
    console.log(
      `GET /audit/verify?content=true: ${n(result.contentChecked)} traces checked (${CONTENT_ALTERED} altered, ` +
        `found) in ${secs(ms)}: ${n(perSecond)} traces/s (the chain's own walk: incremental, nothing new); ` +
        `service RSS ${mb(rssBefore)} before, peak ${mb(peak)}${reset ? '' : ' (peak since start)'}`,
    );
    return { ms, perSecond, peak, rssBefore, reset, traces: result.contentChecked };
  });

  // 7. Export, streamed and counted.
  summary.export = await step('GET /audit/export', async () => {
    const { rows } = await db.query(
      `select count(*)::int as count from audit_entries where organization_id = $1`,
      [orgId],
    );
    const before = rows[0].count;
    const rssBefore = procStatusKib(server.pid, 'VmRSS');
    const reset = resetPeakRss(server.pid);
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/audit/export`, { headers: auth });
    if (res.status !== 200)
      throw new Error(`GET /audit/export: ${res.status} ${(await res.text()).slice(0, 300)}`);
    let lines = 0;
    let bytes = 0;
    let last = 0x0a;
    for await (const chunk of res.body) {
      for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines += 1;
      bytes += chunk.length;
      if (chunk.length > 0) last = chunk[chunk.length - 1];
    }
    if (last !== 0x0a) lines += 1;
    const ms = performance.now() - started;
    const peak = procStatusKib(server.pid, 'VmHWM');
    const { rows: after } = await db.query(
      `select count(*)::int as count from audit_entries where organization_id = $1`,
      [orgId],
    );
    // An export that appends its own entry (audit.exported) may include it: the chain when it ended.
    if (lines !== before && lines !== after[0].count)
      throw new Incorrect(`GET /audit/export: ${lines} lines, the chain holds ${before} entries`);
    const perSecond = lines / (ms / 1000);
    console.log(
      `GET /audit/export: ${n(lines)} lines (${mb(bytes / 1024)}) in ${secs(ms)}: ${n(perSecond)} entries/s ` +
        `(target ≥ ${n(TARGETS.exportPerSecond)}/s); service RSS ${mb(rssBefore)} before, peak ${mb(peak)}` +
        `${reset ? '' : ' (peak since start)'}`,
    );
    return { ms, perSecond, peak, lines };
  });

  // 7b. Memory that does not grow with the chain, through HTTP: a second instance of the service on the same
  // database, its heap capped, verifies the whole chain and streams the whole export.
  summary.capped = await step(`service with a ${SERVICE_HEAP_MIB} MiB heap cap`, async () => {
    const capped = await startService({
      env: { DATABASE_URL: server.databaseUrl, DATABASE_POOL_MAX: '10' },
      args: [`--max-old-space-size=${SERVICE_HEAP_MIB}`],
    });
    try {
      const headers = auth;
      let started = performance.now();
      const verified = await fetch(`${capped.base}/api/v1/audit/verify?full=true`, { headers });
      const result = (await verified.json()).data;
      if (verified.status !== 200 || result?.valid !== true)
        throw new Incorrect(
          `capped service: GET /audit/verify?full=true: ${verified.status} ${JSON.stringify(result)}`,
        );
      const verifyMs = performance.now() - started;
      started = performance.now();
      const contentRes = await fetch(`${capped.base}/api/v1/audit/verify?content=true`, { headers });
      const content = (await contentRes.json()).data;
      if (contentRes.status !== 200 || content?.contentChecked !== ENTRIES + INCREMENTAL)
        throw new Incorrect(
          `capped service: GET /audit/verify?content=true: ${contentRes.status} ${JSON.stringify(content)}`,
        );
      const contentMs = performance.now() - started;
      started = performance.now();
      const res = await fetch(`${capped.base}/api/v1/audit/export`, { headers });
      if (res.status !== 200) throw new Error(`capped service: GET /audit/export: ${res.status}`);
      let lines = 0;
      for await (const chunk of res.body)
        for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines += 1;
      const exportMs = performance.now() - started;
      if (lines !== result.totalEntries)
        throw new Incorrect(
          `capped service: export of ${lines} lines, the chain holds ${result.totalEntries}`,
        );
      const peak = procStatusKib(capped.pid, 'VmHWM');
      console.log(
        `a second instance with --max-old-space-size=${SERVICE_HEAP_MIB}: verified ${n(result.totalEntries)} entries ` +
          `in ${secs(verifyMs)}, checked ${n(content.contentChecked)} traces' content in ${secs(contentMs)}, ` +
          `exported the entries in ${secs(exportMs)}; its peak RSS ${mb(peak)}`,
      );
      return { verifyMs, contentMs, exportMs, peak, entries: result.totalEntries };
    } finally {
      await capped.stop();
    }
  });

  // 8. The list, page 1, unfiltered and with each filter.
  const filters = [
    ['none', ''],
    ['eventType=trace.flagged', '&eventType=trace.flagged'],
    ['eventType=trace.*', `&eventType=${encodeURIComponent('trace.*')}`],
    ['from=middle', `&from=${encodeURIComponent(new Date(midMs).toISOString())}`],
    ['userId=owner', `&userId=${userId}`],
  ];
  summary.list = [];
  console.log(`GET /audit?limit=50, ${REPEAT} requests each after ${WARMUP} warm-ups:`);
  for (const [name, query] of filters) {
    const row = await step(`GET /audit ${name}`, async () => {
      const path = `/api/v1/audit?limit=50${query}`;
      const { p50, p99, body } = await timeRepeated(() => getJson(path), { warmups: WARMUP, repeat: REPEAT });
      const items = Array.isArray(body.data) ? body.data.length : '?';
      const total = body.pagination?.total;
      console.log(
        `  ${name}: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (${items} entries` +
          `${total === undefined ? '' : ` of ${n(total)}`})` +
          `${name === 'none' ? ` target p50 ≤ ${TARGETS.page1P50Ms} ms: ${p50 <= TARGETS.page1P50Ms ? 'met' : 'MISSED'}` : ''}`,
      );
      return { p50, p99 };
    });
    summary.list.push([name, row]);
  }
} finally {
  printSummary();
  await stop();
  rmSync(cliDataDir, { recursive: true, force: true });
}

function printSummary() {
  const failed = (r) => (r?.failed ? `FAILED (${r.failed.slice(0, 120)})` : 'not run');
  const ratio = (perSecond) =>
    summary.floor
      ? `ratio ${(perSecond / summary.floor.oneShot).toFixed(2)} (target ≥ ${TARGETS.ratio})`
      : '';
  const lines = [`\naudit benchmark (PostgreSQL, ${n(ENTRIES)} entries)`];
  if (summary.seed)
    lines.push(
      `  seeding:                   ${secs(summary.seed.ms)} (indexes ${secs(summary.seed.indexMs)}, vacuum ` +
        `analyze ${secs(summary.seed.vacuumMs)})`,
    );
  const v = summary.verify;
  lines.push(
    `  full verification (HTTP):  ${
      v && !v.failed
        ? `${n(v.perSecond)} entries/s  (${secs(v.ms)})   floor (crypto.hash): ${n(summary.floor.oneShot)}/s   ${ratio(v.perSecond)}`
        : failed(v)
    }`,
  );
  const c = summary.cli;
  lines.push(
    `  full verification (CLI):   ${
      c && !c.failed
        ? `${n(c.perSecond)} entries/s  (${secs(c.ms)} with boot)   ${ratio(c.perSecond)}; less boot ` +
          `(${secs(c.bootMs)}): ${netText(c.netPerSecond, summary.floor.oneShot)}`
        : failed(c)
    }`,
  );
  if (summary.floor) lines.push(`  floor (createHash):        ${n(summary.floor.stream)}/s`);
  const d = summary.dbFloor;
  lines.push(
    `  PostgreSQL alone (COPY of the same rows to /dev/null): ${
      d && !d.failed
        ? `${n(d.perSecond)} rows/s, ${(d.perSecond / summary.floor.oneShot).toFixed(2)} of the floor`
        : failed(d)
    }`,
  );
  if (c && !c.failed)
    lines.push(`  CLI with a ${CAPPED_HEAP_MIB} MiB heap cap: valid in ${secs(c.cappedMs)}`);
  const k = summary.capped;
  lines.push(
    `  service with a ${SERVICE_HEAP_MIB} MiB heap cap: ${
      k && !k.failed
        ? `full verification ${secs(k.verifyMs)}, content check ${secs(k.contentMs)}, export ` +
          `${secs(k.exportMs)}, peak RSS ${mb(k.peak)}`
        : failed(k)
    }`,
  );
  lines.push(
    `  peak RSS during verification: ${
      v && !v.failed
        ? `${mb(v.peak)} (before ${mb(v.rssBefore)})${v.reset ? '' : ', peak since start'}`
        : failed(v)
    }`,
  );
  const i = summary.incremental;
  lines.push(
    `  incremental after ${n(INCREMENTAL)} more: ${
      i && !i.failed
        ? `${i.ms.toFixed(1)} ms, verifiedFrom ${typeof i.verifiedFrom === 'number' ? n(i.verifiedFrom) : '(absent)'}, ` +
          `${n(i.checked / (i.ms / 1000))} entries checked/s`
        : failed(i)
    }`,
  );
  const t = summary.content;
  lines.push(
    `  content check (HTTP, ?content=true): ${
      t && !t.failed
        ? `${n(t.perSecond)} traces/s (${n(t.traces)} traces in ${secs(t.ms)}), peak RSS ${mb(t.peak)} (before ` +
          `${mb(t.rssBefore)})${t.reset ? '' : ', peak since start'}`
        : failed(t)
    }`,
  );
  const e = summary.export;
  lines.push(
    `  export: ${
      e && !e.failed
        ? `${n(e.perSecond)} entries/s (${secs(e.ms)}), peak RSS ${mb(e.peak)} (target ≥ ${n(TARGETS.exportPerSecond)}/s)`
        : failed(e)
    }`,
  );
  lines.push(
    `  GET /audit page 1 p50/p99: ${
      summary.list
        ?.map(([name, r]) => `${name} ${r.failed ? 'FAILED' : `${r.p50.toFixed(1)}/${r.p99.toFixed(1)} ms`}`)
        .join('; ') ?? 'not run'
    } (target: page 1 ≤ ${TARGETS.page1P50Ms} ms)`,
  );
  console.log(lines.join('\n'));
}
