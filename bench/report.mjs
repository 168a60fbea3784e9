// Compliance report benchmark (PostgreSQL): one organization on the governance plan with 1,000,000 traces across 20
// agents over the last 30 days (5 % flagged by one of two flag policies, each with a pending review item, 1 % blocked
// by a block policy, the rest approved), the audit entry of every trace forming a valid hash chain after the
// organization's own entries, a few open incidents and compliance-mapping notes. The rows are written with SQL (the
// entries' hashes computed here with the built chainHash), the indexes built after the load, then VACUUM ANALYZE.
// Measures GET /reports/compliance (the figures in SQL, the chain verified, the PDF rendered by Chromium): the first
// render (browser start, rollups computed, the whole chain verified: no checkpoint yet), then BENCH_RENDERS renders
// one at a time (the chain verified from the checkpoint the first left), with the peak RSS of the
// service process, alone and with its descendants (Chromium), sampled every 100 ms. Needs PostgreSQL: DATABASE_URL
// (default the local server); the data goes to a scratch database that is dropped afterwards. BENCH_TRACES,
// BENCH_RENDERS, BENCH_SAVE_PDF (a path: the last PDF is written there); CHROMIUM_PATH and CHROMIUM_SOURCES are
// passed to the service.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chainHash, GENESIS_HASH } from '../dist/libs/platform/src/audit/audit-hash.js';
import {
  addAuditRow,
  auditRows,
  dropIndexes,
  expectJson,
  insertAuditEntries,
  percentile,
  procStatusKib,
  rebuildIndexes,
  seedOrganization,
  startOnPostgres,
} from './support.mjs';

const TRACES = Number(process.env.BENCH_TRACES ?? 1_000_000);
const RENDERS = Number(process.env.BENCH_RENDERS ?? 5);
const AGENTS = 20;
// The traces span the last 30 days less two hours, so that the report's default period (the 30 days before now)
// still covers all of them when the renders run.
const SPAN_MS = 30 * 86_400_000 - 2 * 3_600_000;
const AUDIT_BATCH = 5_000;
const SCHEMA_VERSION = '2026-04-11';
const TARGET_P50_MS = 5_000;

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const mib = (kib) => `${(kib / 1024).toFixed(0)} MiB`;

/** VmRSS of a process in KiB (0 once it has gone). */
const rssKib = (pid) => procStatusKib(pid, 'VmRSS') ?? 0;

/** The pids of every process below `root` (Chromium's browser, zygotes, renderers, GPU and utility processes). */
function descendants(root) {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch {
      /* exited meanwhile */
    }
  }
  const found = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Samples the service's RSS, and with its descendants', every 100 ms until `stop()`, which returns the peaks. */
function sampleMemory(pid) {
  const peak = { service: 0, total: 0, processes: 0 };
  const sample = () => {
    const service = rssKib(pid);
    const below = descendants(pid);
    const total = below.reduce((sum, child) => sum + rssKib(child), service);
    peak.service = Math.max(peak.service, service);
    peak.total = Math.max(peak.total, total);
    peak.processes = Math.max(peak.processes, below.length);
  };
  sample();
  const timer = setInterval(sample, 100);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

const chromium = process.env.CHROMIUM_PATH
  ? `CHROMIUM_PATH=${process.env.CHROMIUM_PATH}`
  : existsSync('/usr/bin/chromium')
    ? '/usr/bin/chromium (system)'
    : '@sparticuz/chromium (bundled; /usr/bin/chromium absent)';

const { server, base, db, stop } = await startOnPostgres({
  CPI_RATE_LIMIT_MAX: '1000000000',
  PDF_RATE_LIMIT_MAX: '1000000',
  ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
  ...(process.env.CHROMIUM_SOURCES ? { CHROMIUM_SOURCES: process.env.CHROMIUM_SOURCES } : {}),
});

try {
  const { orgId, auth, agentIds } = await seedOrganization(
    { base, db },
    { prefix: 'bench-report', plan: 'governance', agents: AGENTS },
  );
  const send = async (method, path, body) =>
    expectJson(
      await fetch(`${base}${path}`, {
        method,
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
  const policyBodies = [
    {
      name: 'Refunds need a human',
      outcome: 'flag',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'refund' }],
    },
    {
      name: 'Low confidence',
      outcome: 'flag',
      conditions: [{ field: 'confidence', operator: 'lt', value: 0.7 }],
    },
    {
      name: 'No card numbers',
      outcome: 'block',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'card number' }],
    },
  ];
  const policies = [];
  for (const body of policyBodies) {
    const created = await send('POST', '/api/v1/policies', {
      match: 'all',
      agentIds: [],
      priority: 100,
      ...body,
    });
    policies.push({ policyId: created.data.id, name: body.name, outcome: body.outcome });
  }

  // Trace g (1..N) is created at T0 - 1 minute - (N - g) / N of the span (whole milliseconds), by agent g % 20.
  // Flagged: g % 20 = 3, by policy 0 when g % 40 = 3 else policy 1, with a pending review item. Blocked: g % 100 = 11,
  // by policy 2. Ids are derived from g and the time, so that the audit entries computed here name the same rows.
  const t0 = Date.now();
  const createdMs = (g) => t0 - 60_000 - Math.floor(((TRACES - g) * SPAN_MS) / TRACES);
  const hex = (n, width) => n.toString(16).padStart(width, '0');
  const seedStart = Date.now();
  const indexes = await dropIndexes(db, ['traces', 'audit_entries']);
  await db.query(
    `insert into traces (id, organization_id, agent_id, status, confidence, input_context, output_decision, metadata,
       rationale, schema_version, human_override, policy_results, review_item_id, search_text, created_at, updated_at)
     select lpad(to_hex(t.ms / 1000), 8, '0') || lpad(to_hex(g), 16, '0'),
       $1, ($2::text[])[g % $3 + 1],
       case when g % 20 = 3 then 'flagged' when g % 100 = 11 then 'blocked' else 'approved' end,
       case when g % 20 = 3 then (10 + g % 7) / 100.0 else (80 + g % 19) / 100.0 end,
       jsonb_build_object('prompt', 'Customer ' || g || ' asks about the refund policy for order ' || g * 7),
       jsonb_build_object('action', 'llm_response', 'text', 'Refunds within 30 days for order ' || g * 7,
                          'decision', 'refund'),
       '{"channel":"chat"}'::jsonb, 'Policy section 4', $7, false,
       case when g % 40 = 3 then jsonb_build_array($8::jsonb) when g % 20 = 3 then jsonb_build_array($9::jsonb)
            when g % 100 = 11 then jsonb_build_array($10::jsonb) else '[]'::jsonb end,
       case when g % 20 = 3 then lpad(to_hex(t.ms / 1000), 8, '0') || 'ee' || lpad(to_hex(g), 14, '0') end,
       'Customer ' || g || ' asks about the refund policy for order ' || g * 7 || ' Refunds within 30 days',
       t.created_at, t.created_at
     from generate_series(1, $4::int) g,
       lateral (select $5::bigint - 60000 - ($4::int - g)::bigint * $6::bigint / $4::int as ms) m,
       lateral (select m.ms, timestamptz 'epoch' + m.ms * interval '1 millisecond' as created_at) t`,
    [orgId, agentIds, AGENTS, TRACES, t0, SPAN_MS, SCHEMA_VERSION, ...policies.map((p) => JSON.stringify(p))],
  );
  const { rowCount: reviewItems } = await db.query(
    `insert into review_items (id, organization_id, trace_id, agent_id, status, matched_policies, created_at, updated_at)
     select review_item_id, organization_id, id, agent_id, 'pending', policy_results, created_at, created_at
     from traces where organization_id = $1 and review_item_id is not null`,
    [orgId],
  );

  // The audit chain: one entry per trace, as the trace writer appends it (its agent as the actor), after the
  // organization's entries so far (registration, agents, policies).
  const { rows: heads } = await db.query(
    `select sequence, hash from audit_entries where organization_id = $1 order by sequence desc limit 1`,
    [orgId],
  );
  const headSequence = heads.length > 0 ? Number(heads[0].sequence) : 0;
  let prevHash = heads.length > 0 ? heads[0].hash : GENESIS_HASH;
  const auditStart = Date.now();
  let hashMs = 0;
  for (let from = 1; from <= TRACES; from += AUDIT_BATCH) {
    const hashing = performance.now();
    const rows = auditRows();
    for (let g = from; g < Math.min(from + AUDIT_BATCH, TRACES + 1); g++) {
      const ms = createdMs(g);
      const sec = Math.floor(ms / 1000);
      const flagged = g % 20 === 3;
      const blocked = !flagged && g % 100 === 11;
      const policy = g % 40 === 3 ? policies[0] : flagged ? policies[1] : blocked ? policies[2] : undefined;
      const agentId = agentIds[g % AGENTS];
      const metadata = {
        agentId,
        confidence: flagged ? (10 + (g % 7)) / 100 : (80 + (g % 19)) / 100,
        schemaVersion: SCHEMA_VERSION,
        policyIds: policy ? [policy.policyId] : [],
        ...(flagged ? { reviewItemId: `${hex(sec, 8)}ee${hex(g, 14)}` } : {}),
      };
      const entry = {
        sequence: headSequence + g,
        organizationId: orgId,
        eventType: `trace.${flagged ? 'flagged' : blocked ? 'blocked' : 'approved'}`,
        userId: null,
        actor: { type: 'agent', id: agentId, email: null },
        targetType: 'trace',
        targetId: `${hex(sec, 8)}${hex(g, 16)}`,
        metadata,
        ip: '127.0.0.1',
        userAgent: 'bench-agent/1.0',
        createdAt: new Date(ms),
      };
      const hash = chainHash(prevHash, entry);
      addAuditRow(rows, `${hex(sec, 8)}a0${hex(g, 14)}`, entry, prevHash, hash);
      prevHash = hash;
    }
    hashMs += performance.now() - hashing;
    await insertAuditEntries(db, orgId, rows);
  }
  const seeded = Date.now();
  await rebuildIndexes(db, indexes);
  const indexed = Date.now();
  await db.query('vacuum analyze');
  const analysed = Date.now();

  // Open incidents and mapping notes, over HTTP (their audit entries continue the chain seeded above).
  const categories = ['other', 'widespread_infringement', 'death', 'critical_infrastructure'];
  for (let i = 0; i < 4; i++) {
    await send('POST', '/api/v1/incidents', {
      title: `Bench incident ${i + 1}`,
      description: 'Seeded by bench/report.mjs',
      category: categories[i],
      agentId: agentIds[i],
      awareAt: new Date(Date.now() - (i + 1) * 86_400_000).toISOString(),
    });
  }
  for (const [clauseId, status] of [
    ['6.1.4', 'covered'],
    ['8.4', 'partial'],
  ]) {
    await send('PATCH', '/api/v1/compliance/mapping', {
      framework: 'iso-42001',
      clauseId,
      status,
      evidence: 'Seeded by bench/report.mjs',
    });
  }

  const verifyStart = performance.now();
  const verify = await expectJson(await fetch(`${base}/api/v1/audit/verify`, { headers: auth }), [200]);
  const verifyMs = performance.now() - verifyStart;
  const chain = verify.data ?? verify;
  if (chain.valid !== true || chain.totalEntries < TRACES) {
    throw new Error(
      `GET /audit/verify: ${JSON.stringify(chain)} (expected valid, at least ${TRACES} entries)`,
    );
  }

  console.log(
    `seeded ${TRACES.toLocaleString('en')} traces, ${reviewItems.toLocaleString('en')} review items and ` +
      `${TRACES.toLocaleString('en')} audit entries (hashing ${seconds(hashMs)}) in ${seconds(seeded - seedStart)} ` +
      `(audit entries ${seconds(seeded - auditStart)}); indexes ${seconds(indexed - seeded)}; ` +
      `vacuum analyze ${seconds(analysed - indexed)}`,
  );
  console.log(
    `GET /audit/verify: valid, ${chain.totalEntries.toLocaleString('en')} entries in ${seconds(verifyMs)}`,
  );
  console.log(`Chromium: ${chromium}`);

  const render = async () => {
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/reports/compliance`, { headers: auth });
    const body = Buffer.from(await res.arrayBuffer());
    const ms = performance.now() - started;
    if (res.status !== 200)
      throw new Error(`GET /reports/compliance: ${res.status} ${body.toString('utf8')}`);
    const type = res.headers.get('content-type') ?? '';
    if (!type.startsWith('application/pdf')) throw new Error(`GET /reports/compliance: content-type ${type}`);
    if (body.subarray(0, 4).toString('latin1') !== '%PDF')
      throw new Error('GET /reports/compliance: not a PDF');
    if (process.env.BENCH_SAVE_PDF) writeFileSync(process.env.BENCH_SAVE_PDF, body);
    return { ms, bytes: body.length };
  };

  // GET /audit/verify left a checkpoint; without it the first render verifies every entry itself, as the first
  // report of the day does (AUDIT_FULL_VERIFY_MAX_AGE_MS), and the later ones verify from the checkpoint it leaves.
  await db.query('delete from audit_chain_checkpoints where organization_id = $1', [orgId]);
  const idleRss = rssKib(server.pid);
  const coldMemory = sampleMemory(server.pid);
  const cold = await render();
  const coldPeak = coldMemory.stop();
  const memory = sampleMemory(server.pid);
  const renders = [];
  for (let i = 0; i < RENDERS; i++) renders.push(await render());
  const peak = memory.stop();

  const times = renders.map((r) => r.ms).sort((a, b) => a - b);
  const p50 = percentile(times, 50);
  const max = times[times.length - 1];
  const met = p50 <= TARGET_P50_MS;
  console.log(`\nGET /reports/compliance, ${RENDERS} renders one at a time after the first:\n`);
  console.log('| render | time | PDF size |');
  console.log('|---|---|---|');
  console.log(
    `| first (cold: browser start, rollups computed, every chain entry verified) | ${seconds(cold.ms)} | ${(cold.bytes / 1024).toFixed(0)} KiB |`,
  );
  renders.forEach((r, i) =>
    console.log(`| ${i + 1} | ${seconds(r.ms)} | ${(r.bytes / 1024).toFixed(0)} KiB |`),
  );
  console.log(
    `| **p50** | ${seconds(p50)} | target ≤ ${seconds(TARGET_P50_MS)}: ${met ? 'met' : 'MISSED'} |`,
  );
  console.log(`| **max** | ${seconds(max)} | |`);
  console.log(
    `\npeak RSS (sampled every 100 ms): service idle before the first render ${mib(idleRss)}; ` +
      `first render: service ${mib(coldPeak.service)}, service + Chromium ${mib(coldPeak.total)}; ` +
      `${RENDERS} renders: service ${mib(peak.service)}, service + Chromium ${mib(peak.total)} ` +
      `(${peak.processes} descendant processes; their RSS counts shared pages once per process)`,
  );
  console.log(
    `\nsummary: ${TRACES.toLocaleString('en')} traces, p50 ${seconds(p50)} (target ≤ ${seconds(TARGET_P50_MS)} ` +
      `${met ? 'met' : 'MISSED'}), max ${seconds(max)}, cold ${seconds(cold.ms)}, verify ${seconds(verifyMs)}, ` +
      `peak RSS ${mib(peak.service)} service / ${mib(peak.total)} with Chromium, PDF ` +
      `${(renders[0]?.bytes ?? cold.bytes).toLocaleString('en')} bytes`,
  );
} finally {
  await stop();
}
