// Ingestion benchmark: POST /api/v1/traces on PostgreSQL with five active policies, from three organizations,
// 50 connections for 20 s (autocannon), against a floor measured in the same run: a bare Fastify route that
// inserts the same row with node-postgres. The traffic is realistic: about 10 % of traces are flagged and 2 %
// blocked. Three runs: no subscriber; a webhook per organization subscribed to trace.flagged, trace.blocked and
// review.completed, delivering to a local receiver, with one event-stream (SSE) client connected (both in a worker
// thread, bench/subscribers.mjs, so that they do not slow the load generator); and the webhooks
// subscribed to every trace event. Prints traces/s, p50, p99, the service's CPU time per trace (user + system, from
// /proc: it shows what the runtime costs, Node.js 20 against 24), the ratio to the floor, the delivery lag from
// commit to receipt (p50, p99), checks that every event arrived exactly once, and verifies every organization's
// audit chain afterwards. Needs PostgreSQL: DATABASE_URL (default the local server). BENCH_DURATION (seconds per
// run; each warm-up lasts 3 s, or BENCH_DURATION if shorter), BENCH_CONNECTIONS. BENCH_SUBSCRIBERS=off leaves out the
// two runs with subscribers (a shorter A/B comparison of the first run, the floor and the chains).
import pg from 'pg';
import { ORGS, PII, POLICIES, setUpOrganizations, startFloor, traceRequests } from './ingest-workload.mjs';
import { autocannonRun as run, cpuMs, expectJson as json, startService } from './support.mjs';
import { startSubscribers } from './subscribers.mjs';

const BASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const WARMUP = Math.min(3, DURATION);
const SUBSCRIBERS = process.env.BENCH_SUBSCRIBERS !== 'off';

// BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the service for the run.
const profiling = Boolean(process.env.BENCH_CPU_PROF);
process.env.DATABASE_URL = BASE_URL;
const server = await startService({
  args: profiling ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
  env: {
    DATABASE_POOL_MAX: '20',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    // The webhook receiver listens on loopback, which only WEBHOOK_ALLOW_PRIVATE_NETWORKS reaches, and production
    // refuses that flag at start-up; NODE_ENV changes nothing else on the ingestion path (only cookie flags).
    NODE_ENV: 'development',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  },
});
const base = server.base;
let floor;
// For counting the events the subscribers should receive.
const counts = new pg.Pool({ connectionString: server.databaseUrl, max: 2 });
let subscribers;
try {
  const orgs = await setUpOrganizations(base);

  /** A run, with the service process's CPU time (user + system, from /proc) per request it answered, in µs. */
  const measured = async (go) => {
    const before = cpuMs(server.pid);
    const result = await go();
    result.cpuPerTraceUs = Math.round(((cpuMs(server.pid) - before) * 1000) / result.requests.total);
    return result;
  };

  // Warm-up, then the measured run. Requests rotate over the organizations' agent keys.
  const requests = traceRequests(orgs);
  await run({ url: base, connections: 10, duration: WARMUP, requests });
  const service = await measured(() => run({ url: base, connections: CONNECTIONS, duration: DURATION, requests }));

  let subscribed;
  let everything;
  if (SUBSCRIBERS) {
    // With subscribers: a webhook per organization and one SSE client (organization 0).
    subscribers = startSubscribers();
    const receiverUrl = await subscribers.call('listen');
    const hooks = [];
    for (const org of orgs) {
      const hook = await json(
        await fetch(`${base}/api/v1/webhooks`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${org.token}` },
          body: JSON.stringify({ url: receiverUrl, events: ['trace.flagged', 'trace.blocked', 'review.completed'] }),
        }),
      );
      hooks.push({ org, id: hook.data.id });
    }
    const streamToken = await json(
      await fetch(`${base}/api/v1/auth/stream-token`, { method: 'POST', headers: { authorization: `Bearer ${orgs[0].token}` } }),
    );
    const opened = subscribers.call('stream', `${base}/api/v1/events/stream?token=${streamToken.data.token}`);
    await Promise.race([
      opened,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the event stream did not open')), 5000)),
    ]);

    // A trace's event is its audit entry (trace.auto_approved announces trace.approved); other events are rows of
    // domain_events.
    const eventCounts = async (since, types) => {
      const auditTypes = types.flatMap((t) => (t === 'trace.approved' ? [t, 'trace.auto_approved'] : t.startsWith('trace.') ? [t] : []));
      const { rows } = await counts.query(
        `select organization_id, sum(n)::int as n from (
           select organization_id, count(*) as n from domain_events
             where created_at >= $1 and type = any($2::text[]) group by organization_id
           union all
           select organization_id, count(*) as n from audit_entries
             where created_at >= $1 and event_type = any($3::text[]) group by organization_id
         ) c group by organization_id`,
        [since, types, auditTypes],
      );
      return new Map(rows.map((r) => [r.organization_id, r.n]));
    };
    /** One run with the webhooks subscribed to `types`: its figures, the delivery lag and the exactly-once check. */
    const subscribedRun = async (types) => {
      await subscribers.call('reset');
      const since = new Date();
      const result = await measured(() => run({ url: base, connections: CONNECTIONS, duration: DURATION, requests }));
      // Requests autocannon left in flight at the end still commit: count once they have.
      await new Promise((r) => setTimeout(r, 2000));
      const expectedHooks = [...(await eventCounts(since, types)).values()].reduce((a, b) => a + b, 0);
      const streamTypes = ['trace.approved', 'trace.flagged', 'trace.blocked', 'review.completed'];
      const expectedStream = (await eventCounts(since, streamTypes)).get(orgs[0].orgId) ?? 0;
      const deadline = Date.now() + 120_000;
      let stats = await subscribers.call('stats');
      while ((stats.received < expectedHooks || stats.streamReceived < expectedStream) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        stats = await subscribers.call('stats');
      }
      return {
        result,
        expectedHooks,
        receivedHooks: stats.received,
        duplicates: stats.duplicates,
        expectedStream,
        receivedStream: stats.streamReceived,
        streamDuplicates: stats.streamDuplicates,
        lagP50: stats.lagP50,
        lagP99: stats.lagP99,
      };
    };
    subscribed = await subscribedRun(['trace.flagged', 'trace.blocked', 'review.completed']);
    for (const hook of hooks) {
      await json(
        await fetch(`${base}/api/v1/webhooks/${hook.id}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${hook.org.token}` },
          body: JSON.stringify({ events: ['trace.approved', 'trace.flagged', 'trace.blocked', 'review.completed'] }),
        }),
      );
    }
    everything = await subscribedRun(['trace.approved', 'trace.flagged', 'trace.blocked', 'review.completed']);

  }

  // The floor: the same row, inserted by a bare Fastify route through node-postgres.
  floor = await startFloor([{ databaseUrl: server.databaseUrl, orgs }]);
  await run({ url: floor.url, connections: 10, duration: WARMUP, requests: floor.requests });
  const floorRun = await run({ url: floor.url, connections: CONNECTIONS, duration: DURATION, requests: floor.requests });

  const chains = [];
  for (const org of orgs) {
    const v = await json(await fetch(`${base}/api/v1/audit/verify`, { headers: { authorization: `Bearer ${org.token}` } }));
    chains.push(v.data);
  }

  const row = (name, r) => ({
    run: name,
    'req/s': Math.round(r.requests.average),
    'p50 ms': r.latency.p50,
    'p99 ms': r.latency.p99,
    'CPU µs/trace': r.cpuPerTraceUs ?? '',
    non2xx: r.non2xx,
    errors: r.errors,
  });
  console.log(`connections=${CONNECTIONS} duration=${DURATION}s organizations=${ORGS} policies/org=${POLICIES.length + (PII ? 1 : 0)}${PII ? ' pii=on (containsPii policy, masking)' : ''} node=${process.version}`);
  console.table([
    row('POST /api/v1/traces', service),
    ...(SUBSCRIBERS
      ? [
          row('+ webhooks (flagged, blocked, review) + 1 SSE client', subscribed.result),
          row('+ webhooks on every trace event + 1 SSE client', everything.result),
        ]
      : []),
    row('floor: bare Fastify + pg insert', floorRun),
  ]);
  const ratioOf = (r) => (r.requests.average / floorRun.requests.average).toFixed(2);
  console.log(`traffic: about 10 % flagged, 2 % blocked`);
  console.log(
    `ratio to floor: ${ratioOf(service)} (target >= 0.5); p99 ${service.latency.p99} ms (target <= 50 ms); ` +
      `service CPU per trace ${service.cpuPerTraceUs} µs (${process.version})`,
  );
  const report = (name, r, target) => {
    console.log(
      `${name}: ratio to floor ${ratioOf(r.result)}${target ? ' (target >= 0.5)' : ''}, p99 ${r.result.latency.p99} ms` +
        `${target ? ' (target <= 50 ms)' : ''}, CPU per trace ${r.result.cpuPerTraceUs} µs; webhook events ${r.receivedHooks}/${r.expectedHooks} received, ` +
        `${r.duplicates} duplicated; stream events ${r.receivedStream}/${r.expectedStream}, ${r.streamDuplicates} ` +
        `duplicated; delivery lag from commit to receipt p50 ${r.lagP50} ms, p99 ${r.lagP99} ms`,
    );
    const exact = r.receivedHooks === r.expectedHooks && r.duplicates === 0 && r.receivedStream === r.expectedStream && r.streamDuplicates === 0;
    if (!exact) {
      console.log(`${name}: NOT exactly once`);
      process.exitCode = 1;
    }
  };
  if (SUBSCRIBERS) {
    report('with webhooks (flagged, blocked, review.completed) and one SSE client', subscribed, true);
    report('with webhooks on every trace event and one SSE client (no target)', everything, false);
  }
  console.log(
    `audit chains: ${chains.map((c) => `${c.valid ? 'valid' : 'INVALID'} (${c.totalEntries} entries)`).join(', ')}`,
  );
  if (chains.some((c) => !c.valid)) process.exitCode = 1;
} finally {
  await subscribers?.close();
  await floor?.close();
  await counts.end();
  await server.stop(profiling ? 'SIGINT' : 'SIGTERM');
}
