// Subject erasure benchmark (PostgreSQL), issue 37's target: erasing a subject with 10,000 decisions among 1,000,000
// takes under 10 s. Seeds one organization with SQL: SUBJECTS_TOTAL traces (default BENCH_TRACES, else 1,000,000)
// across 8 agents and 28 days, about 1 KB of content each (a prompt, retrieved context, an answer, a rationale, the
// caller's metadata), 10 % of them about 20,000 other subjects and SUBJECTS_TARGET (default 10,000, at most 1 % of
// the total) about the target subject, spread evenly in time. 5 % are flagged (half of those decided in review, with
// notes), 1 % blocked, 0.5 % have human feedback with notes; of the target's traces a fifth are flagged and decided
// with notes and a tenth have feedback with notes. Every decided item has its stored `review.completed` event (which
// carries the notes) and a webhook delivery of it with the receiver's answer, and every flagged trace a delivery too,
// so that each step of an erasure batch has work (traces, review notes, CPI notes, stored events, receivers'
// answers). The target's hash is the service's own: one of its traces is ingested over HTTP with the reference, and
// its stored `subject_hash` read back (and compared with the hash derived here as subject-key.ts does). A second
// subject of the same shape (the twin) is among the others. The trace indexes are built after the load (the trigram
// index beside the other rows and indexes), then VACUUM ANALYZE and a CHECKPOINT.
//
// Measures: POST /subjects/:ref/erasure until GET /subjects/:ref/erasure says done (polled every 50 ms): wall time,
// traces erased per second, the 10 s target; the batches' progress as the polls saw it; then GET
// /subjects/:ref/decisions?limit=100 (p50 / p99 of 20 calls, after 3 warm-ups), before the erasure (content present)
// and after it. Checks in SQL afterwards that exactly the target's traces were erased (erased_at set, content null)
// and that every other row (traces, review notes, feedback notes, events, webhook answers) kept its content.
// Needs PostgreSQL: DATABASE_URL (default the local server); the data goes to a scratch database that is dropped
// afterwards (BENCH_KEEP_DB=1 keeps it, with the twin's traces still to erase for a look at the plans). About 4 to 5
// minutes at the default sizes on the 2-core development machine, most of it the trigram index's build.
// SUBJECTS_TOTAL, SUBJECTS_TARGET, BENCH_SMOKE (support.mjs).
import { createHmac, hkdfSync } from 'node:crypto';
import {
  dropIndexes,
  expectJson,
  rebuildIndexes,
  seedOrganization,
  startOnPostgres,
  targetMissed,
  timedGet,
  timeRepeated,
} from './support.mjs';

const TOTAL = Number(process.env.SUBJECTS_TOTAL ?? process.env.BENCH_TRACES ?? 1_000_000);
const TARGET = Number(process.env.SUBJECTS_TARGET ?? Math.min(10_000, Math.floor(TOTAL / 100)));
const AGENTS = 8;
const DAYS = 28; // inside EVENT_RETENTION_DAYS (30): the stored events are not purged during the run
const OTHER_SUBJECTS = 20_000;
const TARGET_MS = 10_000;
const POLL_MS = 50;
const DECISIONS_REPEAT = 20;
const REF = 'customer-4711-bench';
// A second subject of the same shape (as many traces, items, feedback and events), among the other subjects: it must
// stay untouched, and it is there to profile the erasure's statements on a kept database (BENCH_KEEP_DB=1).
const TWIN_REF = 'customer-4712-bench';

// Trace g (1 .. TOTAL - 1, the last trace is the ingested one) is about the target when g % STRIDE = OFFSET and its
// index k = g / STRIDE < TARGET - 1, about the twin when g % STRIDE = TWIN_OFFSET and k < TARGET; else about one of
// the other subjects when g % 10 = 3; else about no one.
const OFFSET = 7;
const TWIN_OFFSET = 13;
const STRIDE = Math.floor((TOTAL - 1 - TWIN_OFFSET) / Math.max(TARGET - 1, 1)); // 100 at the default sizes

if (!(TARGET >= 1 && STRIDE >= 20)) throw new Error('SUBJECTS_TARGET must be 1 to 5 % of SUBJECTS_TOTAL');

const JWT_SECRET = 'bench-secret-'.padEnd(48, 'x'); // what support.mjs starts the service with
const { base, db, stop } = await startOnPostgres();
const fmt = (n) => Math.round(n).toLocaleString('en');
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

try {
  const { userId, orgId, auth } = await seedOrganization(
    { base, db },
    { prefix: 'bench-subjects', plan: 'enterprise', agents: 0 },
  );
  const json = { ...auth, 'content-type': 'application/json' };
  const agentIds = [];
  let agentKey;
  for (let i = 0; i < AGENTS; i++) {
    const res = await fetch(`${base}/api/v1/agents`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        name: ['support', 'claims', 'billing', 'onboarding', 'returns', 'fraud', 'kyc', 'retention'][i],
      }),
    });
    const { data } = await expectJson(res);
    agentIds.push(data.id);
    agentKey ??= data.apiKey;
  }

  // The target's hash as the service computes it: its own trace with the reference, read back.
  const ingested = await expectJson(
    await fetch(`${base}/api/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': agentKey },
      body: JSON.stringify({
        inputContext: { prompt: 'Where is my refund for order 32977? I returned the parcel two weeks ago.' },
        outputDecision: { action: 'llm_response', text: 'Your refund for order 32977 was issued today.' },
        confidence: 0.93,
        subjectRef: REF,
      }),
    }),
  );
  const {
    rows: [{ subject_hash: subjectHash }],
  } = await db.query(`select subject_hash from traces where organization_id = $1 and id = $2`, [
    orgId,
    ingested.data.id,
  ]);
  if (!subjectHash) throw new Error('the ingested trace has no subject_hash');
  // As subject-key.ts derives it: HKDF of ENCRYPTION_KEY (else JWT_SECRET) with the organization's id in its label.
  const subjectKey = Buffer.from(
    hkdfSync(
      'sha256',
      process.env.ENCRYPTION_KEY ?? JWT_SECRET,
      'governance-service',
      `subject-ref:v1:${orgId}`,
      32,
    ),
  );
  const hashOf = (ref) => createHmac('sha256', subjectKey).update(ref, 'utf8').digest('hex');
  const derived = hashOf(REF);
  const twinHash = hashOf(TWIN_REF);
  console.log(
    `target subject hash ${subjectHash.slice(0, 12)}…, ${derived === subjectHash ? 'equal to' : 'DIFFERENT from'} the one derived here`,
  );

  // Seed.
  const seedStart = Date.now();
  const indexes = await dropIndexes(db, ['traces']);
  const span = DAYS * 86_400_000;
  const seeded = TOTAL - 1;
  const seedTraces = (first, last) =>
    db.query(
      `insert into traces (id, organization_id, agent_id, status, confidence, input_context, output_decision, metadata,
         rationale, schema_version, human_override, policy_results, review_item_id, search_text, content_salt,
         subject_hash, created_at, updated_at)
       select lpad(to_hex(extract(epoch from t.created_at)::bigint), 8, '0') || lpad(to_hex(g), 16, '0'),
         $1, ($2::text[])[g % $3 + 1],
         case when f.decided then case when g % 160 = 43 then 'blocked' else 'approved' end
              when f.flagged then 'flagged' when g % 100 = 11 then 'blocked' else 'approved' end,
         case when f.flagged then 0.1 + (g % 7) / 100.0 else 0.8 + (g % 19) / 100.0 end,
         jsonb_build_object('prompt', c.prompt, 'context', jsonb_build_object(
           'retrieved', jsonb_build_array(
             'Refund policy section ' || (g % 9 + 1) || ': items returned within 30 days in their original packaging are '
               || 'refunded to the original payment method within 5 to 10 working days of their arrival at our warehouse.',
             'Shipping policy: orders above 50 EUR ship free within the EU; express delivery costs 9.90 EUR and arrives '
               || 'within two working days in ' || (array['Germany', 'France', 'Austria', 'Spain', 'Italy', 'Ireland'])[g % 6 + 1] || '.'),
           'customerTier', (array['standard', 'plus', 'business'])[g % 3 + 1], 'openOrders', g % 4)),
         jsonb_build_object('action', 'llm_response', 'text', c.answer, 'decision', (array['refund', 'exchange', 'escalate'])[g % 3 + 1]),
         jsonb_build_object('channel', (array['chat', 'email', 'phone'])[g % 3 + 1], 'locale', (array['en-GB', 'de-DE', 'fr-FR'])[g % 3 + 1],
           'model', 'gpt-4o-2024-08-06', 'latencyMs', 300 + g % 900, 'conversationId', md5(g::text)),
         'Matched refund policy section ' || (g % 9 + 1) || '; the order is within the return window and the item category is eligible.',
         '2026-04-11', false,
         case when f.flagged then '[{"policyId":"6650f0a1c2d3e4f5a6b7c801","name":"Low confidence","outcome":"flag"}]'::jsonb
              when g % 100 = 11 or (f.decided and g % 160 = 43)
                then '[{"policyId":"6650f0a1c2d3e4f5a6b7c803","name":"Secret in output","outcome":"block"}]'::jsonb
              else '[]'::jsonb end,
         case when f.flagged then lpad(to_hex(extract(epoch from t.created_at)::bigint), 8, '0') || 'ee' || lpad(to_hex(g), 14, '0') end,
         c.prompt || E'\\n' || c.answer,
         md5('salt' || g),
         case when x.tgt then $8 when x.twin then $13 when g % 10 = 3 then encode(sha256(convert_to('other:' || (g / 10) % $9, 'UTF8')), 'hex') end,
         t.created_at, t.created_at
       from generate_series($6::int, $7::int) g,
         lateral (select g % $10 = $11 and g / $10 < $12 as tgt, g % $10 = $14 and g / $10 <= $12 as twin) x,
         lateral (select now() - interval '1 minute' - ((($4::int - g)::float8 / $4::int) * $5::float8) * interval '1 millisecond' as created_at) t,
         lateral (select g % 20 = 3 or ((x.tgt or x.twin) and (g / $10) % 5 = 1) as flagged) f0,
         lateral (select f0.flagged, f0.flagged and (g % 40 = 3 or x.tgt or x.twin) and t.created_at < now() - interval '1 day' as decided) f,
         lateral (select
           'Hello, this is customer ' || g || '. ' || (array[
             'I returned the jacket from order ' || g * 7 || ' two weeks ago and still have not received my refund.',
             'The blender I bought with order ' || g * 7 || ' stopped working after three days, can I exchange it?',
             'I was charged twice for order ' || g * 7 || ', please refund the duplicate payment to my card.',
             'My parcel for order ' || g * 7 || ' arrived damaged, the box was open and one item is missing.',
             'Can I still cancel order ' || g * 7 || '? I ordered the wrong size by mistake yesterday evening.'])[g % 5 + 1]
             || ' My account e-mail is customer' || g || '@example.com and I live in ' || (array['Berlin', 'Lyon', 'Vienna', 'Madrid', 'Cork'])[g % 5 + 1] || '.' as prompt,
           (array['I am sorry about the delay. ', 'Thank you for reaching out. ', 'I understand, let me check that. '])[g % 3 + 1]
             || 'I have looked at order ' || g * 7 || ' and ' || (array[
             'issued a refund of ' || (g % 180 + 20) || ' EUR to your original payment method; it arrives within 5 to 10 working days.',
             'arranged an exchange: a courier will collect the item on ' || (array['Monday', 'Tuesday', 'Thursday'])[g % 3 + 1] || ' and bring the replacement.',
             'passed your case to a colleague in our payments team, who will contact you by e-mail within one working day.'])[g % 3 + 1] as answer) c`,
      [
        orgId,
        agentIds,
        AGENTS,
        TOTAL,
        span,
        first,
        last,
        subjectHash,
        OTHER_SUBJECTS,
        STRIDE,
        OFFSET,
        TARGET - 1,
        twinHash,
        TWIN_OFFSET,
      ],
    );
  // In two halves side by side, one per connection of the pool (each statement keeps one core busy).
  const half = Math.ceil(seeded / 2);
  await Promise.all([seedTraces(1, half), seedTraces(half + 1, seeded)]);
  const tracesDone = Date.now();

  // Then two sessions side by side: one builds the trigram index (GIN, the longest build by far: about 250 trigrams a
  // trace), the other writes the other rows and builds the other indexes. The builds sort in memory rather than in
  // temporary files (these sessions only).
  const indexTimes = [];
  const build = async (session, list) => {
    await session.query(`set maintenance_work_mem = '1GB'`);
    for (const index of list) {
      const t0 = Date.now();
      await rebuildIndexes(session, [index]);
      indexTimes.push(`${index.name} ${secs(Date.now() - t0)}`);
    }
  };
  const inSession = async (fn) => {
    const session = await db.connect();
    try {
      return await fn(session);
    } finally {
      session.release();
    }
  };
  const gin = indexes.filter((index) => / using gin /i.test(index.def));
  const ginBuilt = inSession((session) => build(session, gin)).then(() => Date.now());
  const rest = await inSession(async (session) => {
    const seeded = await seedOtherRows(session, { orgId, userId, subjectHash, twinHash });
    const rowsDone = Date.now();
    await build(
      session,
      indexes.filter((index) => !gin.includes(index)),
    );
    return { ...seeded, rowsDone, btreesDone: Date.now() };
  });
  const { items, feedback, events, deliveries, rowsDone, btreesDone } = rest;
  const indexed = Math.max(await ginBuilt, btreesDone);
  await db.query('vacuum analyze');
  // Measured from a clean start: the load's dirty pages written out now rather than during the erasure.
  await db.query('checkpoint');
  const seedEnd = Date.now();

  const count = async (sql, params = [orgId, subjectHash]) => Number((await db.query(sql, params)).rows[0].n);
  const targetTraces = await count(
    `select count(*) as n from traces where organization_id = $1 and subject_hash = $2`,
  );
  const subjectTraces = await count(
    `select count(*) as n from traces where organization_id = $1 and subject_hash is not null`,
    [orgId],
  );
  const totalTraces = await count(`select count(*) as n from traces where organization_id = $1`, [orgId]);
  // The notes and answers of the target's traces and of all others: the erasure takes the first, keeps the second.
  const tally = async () => {
    const {
      rows: [t],
    } = await db.query(
      `select
         (select count(*) filter (where t.subject_hash = $2) from review_items r join traces t on t.id = r.trace_id
           where r.organization_id = $1 and r.notes is not null)::int as target_notes,
         (select count(*) filter (where t.subject_hash is distinct from $2) from review_items r join traces t on t.id = r.trace_id
           where r.organization_id = $1 and r.notes is not null)::int as other_notes,
         (select count(*) filter (where t.subject_hash = $2) from trace_feedback f join traces t on t.id = f.trace_id
           where f.organization_id = $1 and f.notes is not null)::int as target_feedback,
         (select count(*) filter (where t.subject_hash is distinct from $2) from trace_feedback f join traces t on t.id = f.trace_id
           where f.organization_id = $1 and f.notes is not null)::int as other_feedback,
         (select count(*) filter (where t.subject_hash = $2) from domain_events e join traces t on t.id = e.data->>'traceId'
           where e.organization_id = $1 and e.data ? 'notes')::int as target_events,
         (select count(*) filter (where t.subject_hash is distinct from $2) from domain_events e join traces t on t.id = e.data->>'traceId'
           where e.organization_id = $1 and e.data ? 'notes')::int as other_events,
         (select count(*) from webhook_deliveries d join domain_events e on e.id = d.event_id join traces t on t.id = e.data->>'traceId'
           where d.organization_id = $1 and t.subject_hash = $2 and d.response_body is not null)::int as target_answers,
         (select count(*) from webhook_deliveries d where d.organization_id = $1 and d.response_body is not null)::int as all_answers`,
      [orgId, subjectHash],
    );
    return { ...t, other_answers: t.all_answers - t.target_answers };
  };
  const seededTally = await tally();
  const {
    rows: [disk],
  } =
    await db.query(`select pg_total_relation_size('traces')::float8 as total, avg(pg_column_size(t.*))::float8 as row,
                          avg(octet_length(input_context::text) + octet_length(output_decision::text)
                              + octet_length(metadata::text) + octet_length(rationale))::float8 as content
                        from traces t`);
  if (totalTraces !== TOTAL) throw new Error(`seeded ${totalTraces} traces, expected ${TOTAL}`);
  if (targetTraces !== TARGET) throw new Error(`the target has ${targetTraces} traces, expected ${TARGET}`);
  console.log(
    `seeded ${fmt(totalTraces)} traces (${fmt(subjectTraces)} with a subject, ${fmt(targetTraces)} of them the target's; ` +
      `content ${fmt(disk.content)} bytes as JSON text, ${fmt(disk.row)} bytes a row, ${fmt(disk.total / 1024 ** 2)} MB ` +
      `with its indexes), ${fmt(items)} review items, ` +
      `${fmt(feedback)} feedback rows, ${fmt(events)} stored events, ${fmt(deliveries)} webhook deliveries; ` +
      `the target's: ${fmt(seededTally.target_notes)} review notes, ${fmt(seededTally.target_feedback)} feedback notes, ` +
      `${fmt(seededTally.target_events)} stored events, ${fmt(seededTally.target_answers)} webhook answers`,
  );
  console.log(
    `seed: ${secs(seedEnd - seedStart)} (traces ${secs(tracesDone - seedStart)}; then side by side the trigram index, ` +
      `and the other rows ${secs(rowsDone - tracesDone)} and the other indexes ${secs(btreesDone - rowsDone)}: ` +
      `${secs(indexed - tracesDone)} in all; vacuum analyze and checkpoint ${secs(seedEnd - indexed)}); indexes: ${indexTimes.join(', ')}`,
  );

  const decisionsPath = `/api/v1/subjects/${encodeURIComponent(REF)}/decisions?limit=100`;
  const decisions = () =>
    timeRepeated(() => timedGet(base, decisionsPath, auth), { warmups: 3, repeat: DECISIONS_REPEAT });
  const before = await decisions();
  if (before.body.pagination.total !== TARGET)
    throw new Error(`decisions counted ${before.body.pagination.total}`);

  // The erasure: POST, then the status every 50 ms until done.
  const erasurePath = `${base}/api/v1/subjects/${encodeURIComponent(REF)}/erasure`;
  const started = performance.now();
  const { data: job } = await expectJson(await fetch(erasurePath, { method: 'POST', headers: auth }), [202]);
  const progress = [];
  let status;
  for (;;) {
    const { data } = await expectJson(await fetch(erasurePath, { headers: auth }), [200]);
    const at = performance.now() - started;
    if (progress.length === 0 || progress.at(-1).erased !== data.tracesErased)
      progress.push({ at, erased: data.tracesErased });
    if (data.status === 'done') {
      status = { ...data, wallMs: at };
      break;
    }
    if (at > 600_000) throw new Error(`erasure not done after 10 minutes: ${JSON.stringify(data)}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const serverMs = new Date(status.finishedAt).getTime() - new Date(status.startedAt).getTime();
  const met = status.wallMs < TARGET_MS;
  if (!met) targetMissed();
  console.log(
    `erasure ${job.jobId}: ${fmt(status.tracesErased)} traces in ${secs(status.wallMs)} from POST to done ` +
      `(${secs(serverMs)} startedAt to finishedAt), ${fmt(status.tracesErased / (status.wallMs / 1000))} traces/s; ` +
      `target < ${TARGET_MS / 1000} s ${met ? 'met' : 'MISSED'}`,
  );
  // Per batch of 1,000 (as the polls saw it: each change of tracesErased, to within 50 ms).
  const steps = progress
    .slice(1)
    .map((p, i) => ({ erased: p.erased - progress[i].erased, ms: p.at - progress[i].at }));
  if (steps.length > 0) {
    const perThousand = steps.filter((s) => s.erased > 0).map((s) => (s.ms / s.erased) * 1000);
    console.log(
      `progress as polled: ${progress.map((p) => `${fmt(p.erased)}@${(p.at / 1000).toFixed(2)}s`).join(' ')}; ` +
        `about ${fmt(perThousand.reduce((a, b) => a + b, 0) / perThousand.length)} ms per 1,000 traces`,
    );
  }
  if (status.tracesErased !== TARGET)
    throw new Error(`the job erased ${status.tracesErased} traces, expected ${TARGET}`);

  const after = await decisions();
  console.log(
    `GET /subjects/:ref/decisions?limit=100 (${DECISIONS_REPEAT} calls after 3 warm-ups): p50 ${before.p50.toFixed(1)} ms, ` +
      `p99 ${before.p99.toFixed(1)} ms before the erasure; p50 ${after.p50.toFixed(1)} ms, p99 ${after.p99.toFixed(1)} ms after it`,
  );

  // What was erased, and what was not.
  const {
    rows: [check],
  } = await db.query(
    `select
       count(*) filter (where subject_hash = $2 and erased_at is not null and input_context is null
                          and output_decision is null and metadata is null and rationale is null
                          and search_text = '' and content_salt is null)::int as target_erased,
       count(*) filter (where subject_hash = $2)::int as target_all,
       count(*) filter (where subject_hash is distinct from $2 and erased_at is null and input_context is not null
                          and output_decision is not null and search_text <> '' and content_salt is not null)::int as others_intact,
       count(*) filter (where subject_hash is distinct from $2)::int as others_all,
       count(*) filter (where subject_hash = $3 and erased_at is null and input_context is not null)::int as twin_intact
     from traces where organization_id = $1`,
    [orgId, subjectHash, twinHash],
  );
  const left = await tally();
  const problems = [];
  if (check.target_erased !== TARGET || check.target_all !== TARGET)
    problems.push(`${check.target_erased} of the target's ${check.target_all} traces erased`);
  if (check.twin_intact !== TARGET)
    problems.push(`${check.twin_intact} of the twin's ${TARGET} traces intact`);
  if (check.others_intact !== TOTAL - TARGET || check.others_all !== TOTAL - TARGET)
    problems.push(`${check.others_intact} of the ${check.others_all} other traces intact`);
  for (const key of ['target_notes', 'target_feedback', 'target_events', 'target_answers'])
    if (left[key] !== 0) problems.push(`${key}: ${left[key]} left`);
  for (const key of ['other_notes', 'other_feedback', 'other_events', 'other_answers'])
    if (left[key] !== seededTally[key]) problems.push(`${key}: ${left[key]} kept of ${seededTally[key]}`);
  console.log(
    `checked in SQL: ${fmt(check.target_erased)} of the target's ${fmt(check.target_all)} traces erased (erased_at set, ` +
      `content, similarity text and salt gone); ${fmt(check.others_intact)} of the ${fmt(check.others_all)} other traces ` +
      `untouched (the twin's ${fmt(check.twin_intact)} among them); the target's review notes / feedback notes / event notes / webhook answers left: ` +
      `${left.target_notes} / ${left.target_feedback} / ${left.target_events} / ${left.target_answers}; the others' kept: ` +
      `${fmt(left.other_notes)} / ${fmt(left.other_feedback)} / ${fmt(left.other_events)} / ${fmt(left.other_answers)} ` +
      `(seeded ${fmt(seededTally.other_notes)} / ${fmt(seededTally.other_feedback)} / ${fmt(seededTally.other_events)} / ` +
      `${fmt(seededTally.other_answers)})`,
  );
  if (problems.length > 0) throw new Error(`wrong erasure: ${problems.join('; ')}`);
  console.log(
    `summary: erased ${fmt(TARGET)} of ${fmt(TOTAL)} traces in ${secs(status.wallMs)} ` +
      `(${fmt(status.tracesErased / (status.wallMs / 1000))} traces/s), target < 10 s ${met ? 'met' : 'MISSED'}; ` +
      `decisions p50 ${after.p50.toFixed(1)} ms; seed ${secs(seedEnd - seedStart)}`,
  );
} finally {
  await stop();
}

/**
 * The review items of the flagged traces (with notes once decided), the feedback, the decided items' stored events, a
 * webhook and its deliveries, in the session `db`.
 */
async function seedOtherRows(db, { orgId, userId, subjectHash, twinHash }) {
  const { rowCount: items } = await db.query(
    `insert into review_items (id, organization_id, trace_id, agent_id, status, matched_policies, decision, notes,
     decided_by, decided_at, created_at, updated_at)
   select review_item_id, organization_id, id, agent_id,
     case when status = 'approved' then 'approved' when status = 'blocked' then 'rejected' else 'pending' end,
     policy_results,
     case when status = 'approved' then 'approve' when status = 'blocked' then 'reject' end,
     case when status in ('approved', 'blocked') then 'Checked against order ' || right(id, 6) || ': the customer '
       || 'quoted the order and their e-mail; the answer matches refund policy section 4, approved as sent.' end,
     case when status in ('approved', 'blocked') then $2 end,
     case when status in ('approved', 'blocked') then created_at + interval '3 hours' end,
     created_at, created_at + case when status in ('approved', 'blocked') then interval '3 hours' else interval '0' end
   from traces where organization_id = $1 and review_item_id is not null`,
    [orgId, userId],
  );
  // Feedback: g % 200 = 17 (never the target's), and a tenth of the target's and the twin's traces.
  const { rowCount: feedback } = await db.query(
    `insert into trace_feedback (organization_id, trace_id, agent_id, action, status_before, original_decision,
     corrected_decision, original_confidence, corrected_confidence, notes, user_email, trace_created_at, first_at,
     last_at, first_corrected_at, submissions)
   select organization_id, id, agent_id, 'approve', status, output_decision->'decision', null, confidence, null,
     'Called the customer back about ' || (output_decision->>'decision') || ': they confirmed the answer solved it.',
     'reviewer@example.com', created_at, created_at + interval '5 hours', created_at + interval '5 hours', null, 1
   from traces
   where organization_id = $1
     and (('x' || right(id, 8))::bit(32)::int % 200 = 17
          or (subject_hash in ($2, $4) and ('x' || right(id, 8))::bit(32)::int / $3 % 10 = 3))`,
    [orgId, subjectHash, STRIDE, twinHash],
  );
  // The decided items' stored events (as ReviewQueueService publishes them), a webhook, and its deliveries of those
  // events and of the flagged traces' events, each with the receiver's answer.
  const { rowCount: events } = await db.query(
    `insert into domain_events (id, organization_id, type, agent_id, data, created_at)
   select lpad(to_hex(extract(epoch from decided_at)::bigint), 8, '0') || 'dd' || right(id, 14), organization_id,
     'review.completed', agent_id,
     jsonb_build_object('reviewItemId', id, 'traceId', trace_id, 'agentId', agent_id, 'decision', decision,
       'status', status, 'traceStatus', case when status = 'approved' then 'approved' else 'blocked' end,
       'notes', notes, 'decidedBy', decided_by, 'decidedAt', decided_at, 'resolution', 'review'),
     decided_at
   from review_items where organization_id = $1 and decided_at is not null`,
    [orgId],
  );
  const webhookId = 'ffff0000aaaa0000bbbb0001';
  await db.query(
    `insert into webhooks (id, organization_id, url, events, is_active, secret_sealed, created_by, created_at, updated_at)
   values ($2, $1, 'https://hooks.example.com/governance', '["trace.flagged","review.completed"]', true, 'unused', $3,
     now() - interval '40 days', now() - interval '40 days')`,
    [orgId, webhookId, userId],
  );
  const { rowCount: deliveries } = await db.query(
    `insert into webhook_deliveries (id, organization_id, webhook_id, event_id, event_type, status, attempts,
     response_status, response_body, created_at, completed_at)
   select left(e.id, 8) || e.tag || right(e.id, 14), $1, $2, e.id, e.type, 'succeeded', 1, 200,
     '{"received":true,"ticket":"' || right(e.id, 10) || '","message":"Stored in the review archive with its notes"}',
     e.created_at, e.created_at + interval '1 second'
   from (select id, type, created_at, 'fd' as tag from domain_events where organization_id = $1
         union all
         select left(trace_id, 8) || 'a0' || right(trace_id, 14), 'trace.flagged', created_at, 'fe' from review_items
          where organization_id = $1) e`,
    [orgId, webhookId],
  );
  return { items, feedback, events, deliveries };
}
