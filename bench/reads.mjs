// Read benchmark (PostgreSQL): one organization with 1,000,000 traces across 20 agents and 90 days, 5 % of them
// flagged at ingestion (half of those decided in review), 1 % blocked, and human feedback (POST /cpi/ingest's rows)
// on 1 % of them, half of it corrections. The rows are written with SQL (the ingest path has its own benchmark), the
// trace indexes built after the load, then VACUUM ANALYZE. Measures, one request at a time, p50 and p99 of GET /cpi,
// GET /cpi/analytics, GET /agents, GET /traces page 1 with each filter and GET /traces at page 5,000, and the first
// read after seeding (which rolls up the closed days once). It prints the seed's and the index build's times and the
// disk the traces take (the table with its TOAST and indexes, in all and per million traces). Needs PostgreSQL:
// DATABASE_URL (default the local server); the data goes to a scratch database that is dropped afterwards.
// BENCH_TRACES (10000000 for the ten-million run), BENCH_REPEAT, BENCH_ONLY (a regular expression over the request
// names), BENCH_SMOKE (support.mjs: a missed target does not fail a smoke run).
import {
  dropIndexes,
  rebuildIndexes,
  seedOrganization,
  startOnPostgres,
  targetMissed,
  timedGet,
  timeRepeated,
} from './support.mjs';

const TRACES = Number(process.env.BENCH_TRACES ?? 1_000_000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 200);
const AGENTS = 20;
const DAYS = 90;

const TARGETS = { cpi: 250, list: 20, deep: 100 };

const { base, db, stop } = await startOnPostgres({ CPI_RATE_LIMIT_MAX: '1000000000' });

try {
  const { userId, orgId, auth, agentIds } = await seedOrganization(
    { base, db },
    { prefix: 'bench-reads', plan: 'enterprise', agents: AGENTS },
  );

  // Seed. Trace g (1..N) is created at an even spread over the last 90 days (the newest a minute ago), by agent g % 20.
  // Flagged: g % 20 = 3; decided in review when g % 40 = 3 and older than a day (approve three times in four, else
  // reject, the trace becoming approved or blocked). Blocked: g % 100 = 11. Feedback: g % 200 = 17 (unflagged traces)
  // and g % 200 = 23 (flagged ones); a correction when g % 400 is 17 or 23, else an approval.
  const seedStart = Date.now();
  const indexes = await dropIndexes(db, ['traces']);
  const span = DAYS * 86_400_000;
  // In two halves of g side by side, one per connection of the pool (each statement keeps one core busy).
  const half = Math.ceil(TRACES / 2);
  const seedTraces = (first, last) =>
    db.query(
      `insert into traces (id, organization_id, agent_id, status, confidence, input_context, output_decision, metadata,
       rationale, schema_version, human_override, policy_results, review_item_id, search_text, created_at, updated_at)
     select lpad(to_hex(extract(epoch from t.created_at)::bigint), 8, '0') || lpad(to_hex(g), 16, '0'),
       $1, ($2::text[])[g % $3 + 1],
       case when g % 200 in (17, 23) then 'success'
            when g % 20 = 3 and g % 40 = 3 and t.created_at < now() - interval '1 day'
              then case when g % 160 = 43 then 'blocked' else 'approved' end
            when g % 20 = 3 then 'flagged' when g % 100 = 11 then 'blocked' else 'approved' end,
       case when g % 20 = 3 then 0.1 + (g % 7) / 100.0 else 0.8 + (g % 19) / 100.0 end,
       jsonb_build_object('prompt', 'Customer ' || g || ' asks about the refund policy for order ' || g * 7),
       case when g % 400 in (17, 23)
         then jsonb_build_object('action', 'llm_response', 'text', 'Refunds within 30 days for order ' || g * 7,
                                 'decision', 'refuse', 'originalDecision', 'refund', 'correctionNotes',
                                 (array['Wrong policy cited', 'Customer is eligible', 'Tone', 'wrong policy cited '])[g % 4 + 1])
         else jsonb_build_object('action', 'llm_response', 'text', 'Refunds within 30 days for order ' || g * 7,
                                 'decision', 'refund') end,
       '{"channel":"chat"}'::jsonb,
       case when g % 400 in (17, 23) then '[Human correction] Policy section 4' else 'Policy section 4' end,
       '2026-04-11', g % 400 in (17, 23), '[]'::jsonb,
       case when g % 20 = 3 then lpad(to_hex(extract(epoch from t.created_at)::bigint), 8, '0') || 'ee' || lpad(to_hex(g), 14, '0') end,
       'Customer ' || g || ' asks about the refund policy for order ' || g * 7 || ' Refunds within 30 days',
       t.created_at, t.created_at
     from generate_series($6::int, $7::int) g,
       lateral (select now() - interval '1 minute' - (($4::int - g)::float8 / $4::int * $5::float8) * interval '1 millisecond' as created_at) t`,
      [orgId, agentIds, AGENTS, TRACES, span, first, last],
    );
  await Promise.all([seedTraces(1, half), seedTraces(half + 1, TRACES)]);
  await db.query(
    `insert into review_items (id, organization_id, trace_id, agent_id, status, matched_policies, decision, decided_by,
       decided_at, created_at, updated_at)
     select review_item_id, organization_id, id, agent_id,
       case when status = 'approved' then 'approved' when status = 'blocked' then 'rejected' else 'pending' end,
       '[]'::jsonb,
       case when status = 'approved' then 'approve' when status = 'blocked' then 'reject' end,
       case when status in ('approved', 'blocked') then $2 end,
       case when status in ('approved', 'blocked') then created_at + interval '3 hours' end,
       created_at, created_at
     from traces where organization_id = $1 and review_item_id is not null`,
    [orgId, userId],
  );
  const { rowCount: feedback } = await db.query(
    `insert into trace_feedback (organization_id, trace_id, agent_id, action, status_before, original_decision,
       corrected_decision, original_confidence, corrected_confidence, notes, user_email, trace_created_at, first_at,
       last_at, first_corrected_at, submissions)
     select organization_id, id, agent_id,
       case when human_override then 'correct' else 'approve' end,
       case when review_item_id is not null then 'flagged' else 'approved' end,
       '"refund"'::jsonb, case when human_override then '"refuse"'::jsonb end,
       confidence, case when human_override then 0.6 end,
       output_decision->>'correctionNotes', 'reviewer@example.com', created_at,
       created_at + (('x' || right(id, 4))::bit(16)::int % 600) * interval '1 hour',
       created_at + (('x' || right(id, 4))::bit(16)::int % 600) * interval '1 hour',
       case when human_override then created_at + (('x' || right(id, 4))::bit(16)::int % 600) * interval '1 hour' end, 1
     from traces where organization_id = $1 and status = 'success'`,
    [orgId],
  );
  const seeded = Date.now();
  // The builds sort in memory rather than in temporary files (this session only: the server's setting is 64 MB).
  const builder = await db.connect();
  try {
    await builder.query(`set maintenance_work_mem = '1GB'`);
    await rebuildIndexes(builder, indexes);
  } finally {
    builder.release();
  }
  const indexed = Date.now();
  await db.query('vacuum analyze');
  console.log(
    `seeded ${TRACES.toLocaleString('en')} traces, ${feedback.toLocaleString('en')} feedback rows in ` +
      `${((seeded - seedStart) / 1000).toFixed(0)} s; indexes ${((indexed - seeded) / 1000).toFixed(0)} s; ` +
      `vacuum analyze ${((Date.now() - indexed) / 1000).toFixed(0)} s`,
  );
  const {
    rows: [disk],
  } = await db.query(
    `select pg_total_relation_size('traces')::float8 as total, pg_relation_size('traces')::float8 as heap,
       pg_indexes_size('traces')::float8 as indexes`,
  );
  const mb = (bytes) => `${(bytes / 1024 ** 2).toLocaleString('en', { maximumFractionDigits: 0 })} MB`;
  console.log(
    `traces on disk (table, TOAST and indexes): ${mb(disk.total)} (heap ${mb(disk.heap)}, indexes ` +
      `${mb(disk.indexes)}, TOAST and maps ${mb(disk.total - disk.heap - disk.indexes)}), ` +
      `${mb(disk.total / (TRACES / 1_000_000))} per million traces`,
  );

  const get = (path) => timedGet(base, path, auth);

  const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
  // The first read after seeding rolls up the closed days once (the list's total reads the rollups).
  const first = await get('/api/v1/traces?limit=20');
  console.log(`first GET /traces after seeding (rolls up ${DAYS} closed days): ${first.ms.toFixed(0)} ms`);
  const counted = first.body.pagination.total;
  if (counted !== TRACES) throw new Error(`GET /traces counted ${counted} traces, seeded ${TRACES}`);

  // The CPI rollup must count what was seeded: every trace, and a verdict for each decided item and feedback row.
  if (!only || only.test('GET /cpi')) {
    const cpi = (await get('/api/v1/cpi')).body.data;
    if (cpi.totals.traces !== TRACES) throw new Error(`GET /cpi counted ${cpi.totals.traces} traces`);
    console.log(
      `GET /cpi: ${cpi.totals.humanVerdicts.toLocaleString('en')} human verdicts, ` +
        `${cpi.totals.decidedFlags.toLocaleString('en')} decided flags, correct-flag rate ${cpi.correctFlagRate}, ` +
        `false-flag rate ${cpi.falseFlagRate}, override rate ${cpi.humanOverrideRate}`,
    );
  }

  const to = new Date(Date.now() - 30 * 86_400_000).toISOString();
  const from = new Date(Date.now() - 60 * 86_400_000).toISOString();
  const cases = [
    ['GET /cpi', '/api/v1/cpi', TARGETS.cpi],
    ['GET /cpi/analytics', '/api/v1/cpi/analytics', TARGETS.cpi],
    ['GET /agents', '/api/v1/agents', undefined],
    ['GET /traces page 1', '/api/v1/traces?limit=20', TARGETS.list],
    ['GET /traces page 1, agentId', `/api/v1/traces?limit=20&agentId=${agentIds[7]}`, TARGETS.list],
    ['GET /traces page 1, status=flagged', '/api/v1/traces?limit=20&status=flagged', TARGETS.list],
    ['GET /traces page 1, status=blocked', '/api/v1/traces?limit=20&status=blocked', TARGETS.list],
    ['GET /traces page 1, from', `/api/v1/traces?limit=20&from=${from}`, TARGETS.list],
    ['GET /traces page 1, to', `/api/v1/traces?limit=20&to=${to}`, TARGETS.list],
    ['GET /traces page 1, from and to', `/api/v1/traces?limit=20&from=${from}&to=${to}`, TARGETS.list],
    [
      'GET /traces page 1, agentId, status, from, to',
      `/api/v1/traces?limit=20&agentId=${agentIds[3]}&status=approved&from=${from}&to=${to}`,
      TARGETS.list,
    ],
    ['GET /traces page 5,000', '/api/v1/traces?limit=20&page=5000', TARGETS.deep],
  ];
  // A build without the CPI routes (they come with issue 12's CPI module) skips their rows and says so.
  const served = async (path) => (await fetch(`${base}${path}`, { headers: auth })).status !== 404;
  const skipped = [];
  for (const [name, path] of cases) if (!(await served(path))) skipped.push(name);
  const rows = [];
  for (const [name, path, target] of cases.filter(
    ([name]) => (!only || only.test(name)) && !skipped.includes(name),
  )) {
    const { p50, p99, body } = await timeRepeated(() => get(path), { warmups: 10, repeat: REPEAT });
    const total = body.pagination?.total;
    rows.push({ name, p50, p99, target, total });
  }
  if (skipped.length > 0) console.log(`not served by this build, skipped: ${skipped.join(', ')}`);
  console.log(`\n${REPEAT} requests each, one at a time, after 10 warm-up requests:\n`);
  console.log('| request | p50 | p99 | target (p50) | rows counted |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) {
    if (r.target !== undefined && r.p50 > r.target) targetMissed();
    const verdict = r.target === undefined ? '' : `≤ ${r.target} ms ${r.p50 <= r.target ? 'met' : 'MISSED'}`;
    console.log(
      `| ${r.name} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${verdict} | ${r.total?.toLocaleString('en') ?? ''} |`,
    );
  }
} finally {
  await stop();
}
