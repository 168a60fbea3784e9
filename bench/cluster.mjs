// Cluster benchmark: bench:ingest's workload (POST /api/v1/traces from three organizations with five policies each,
// about 10 % flagged and 2 % blocked, 50 connections) through HAProxy in front of 1, 2 and 3 API replicas (WORKERS=off)
// with one worker, all on one PostgreSQL database and one Redis on this machine (tools/cluster/cluster.mjs). One
// cluster of three replicas serves every size: the replicas beyond the size are put in HAProxy's maintenance state (an
// idle Node.js process costs nothing), so the sizes take turns on the same database, round after round, and the
// figures are the medians over the rounds (sequential runs on this machine vary by 10 to 20 %). The floor is
// bench:ingest's, a bare Fastify route inserting the same row with node-postgres, measured in each round.
// The target (issue 36): adding a replica never lowers throughput, nor raises p99, by more than 10 %.
// Needs `npm run build`, haproxy, PostgreSQL (DATABASE_URL) and Redis (REDIS_URL). BENCH_DURATION (seconds per run,
// default 15), BENCH_CONNECTIONS (50), BENCH_ROUNDS (3), BENCH_SIZES (default 1,2,3), BENCH_BALANCE (HAProxy's `balance`,
// default roundrobin; 'hdr(X-Api-Key)' routes each agent key to one replica). Prints, per size, the trace writer's
// batches (traces per commit, commits a second) from the replicas' metrics: what splits as replicas are added.
import { startCluster } from '../tools/cluster/cluster.mjs';
import { ORGS, setUpOrganizations, startFloor, traceRequests } from './ingest-workload.mjs';
import { autocannonRun as run, cpuMs, SMOKE, targetMissed } from './support.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 15);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 3));
const SIZES = (process.env.BENCH_SIZES ?? '1,2,3').split(',').map(Number);
const WARMUP = Math.min(3, DURATION);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * The trace writer's batches so far, over these replicas: how many were committed, and the traces in them; and the
 * traces each replica has committed.
 */
async function batches(replicas) {
  let count = 0;
  let sum = 0;
  const perReplica = [];
  for (const replica of replicas) {
    let traces = 0;
    for (const line of (await replica.metrics()).split('\n')) {
      const value = Number(line.split(' ').at(-1));
      if (line.startsWith('governance_trace_writer_batch_size_count')) count += value;
      if (line.startsWith('governance_trace_writer_batch_size_sum')) sum += value;
      if (line.startsWith('governance_traces_ingested_total{')) traces += value;
    }
    perReplica.push(traces);
  }
  return { count, sum, perReplica };
}

const cluster = await startCluster({
  replicas: Math.max(...SIZES),
  workers: 1,
  env: { DATABASE_POOL_MAX: '20', AUTH_RATE_LIMIT_MAX: '1000000000' },
  balance: process.env.BENCH_BALANCE ?? 'roundrobin',
});
let floor;
try {
  const orgs = await setUpOrganizations(cluster.base);
  floor = await startFloor([{ databaseUrl: cluster.database.url, orgs }]);
  const requests = traceRequests(orgs);
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round = {};
    for (const size of SIZES) {
      for (const [i, replica] of cluster.replicas.entries()) await cluster.setServing(replica.name, i < size);
      await run({ url: cluster.base, connections: 10, duration: WARMUP, requests });
      const serving = cluster.replicas.slice(0, size);
      const pids = serving.map((p) => p.pid);
      const before = pids.map(cpuMs);
      const batchesBefore = await batches(serving);
      const result = await run({ url: cluster.base, connections: CONNECTIONS, duration: DURATION, requests });
      const cpu = pids.reduce((sum, pid, i) => sum + cpuMs(pid) - before[i], 0);
      const batchesAfter = await batches(serving);
      const committed = batchesAfter.count - batchesBefore.count;
      // The blocked traces (2 %) answer 403 by design; anything else is a failure.
      const statuses = result.statusCodeStats ?? {};
      const unexpected = Object.entries(statuses).filter(([code]) => !['201', '202', '403'].includes(code));
      if (unexpected.length > 0 || result.errors > 0 || result.timeouts > 0) {
        console.log(
          `${size} replicas: unexpected answers ${JSON.stringify(unexpected)}, ${result.errors} errors`,
        );
        process.exitCode = 1;
      }
      round[size] = {
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        cpuUs: (cpu * 1000) / result.requests.total,
        batch: committed > 0 ? (batchesAfter.sum - batchesBefore.sum) / committed : 0,
        commitsPerS: committed / DURATION,
        // The busiest replica's share of the traces: 1 / size when the proxy spreads them evenly.
        busiest:
          Math.max(...batchesAfter.perReplica.map((n, i) => n - batchesBefore.perReplica[i])) /
          Math.max(1, batchesAfter.perReplica.reduce((a, n, i) => a + n - batchesBefore.perReplica[i], 0)),
      };
    }
    await run({ url: floor.url, connections: 10, duration: WARMUP, requests: floor.requests });
    const floorRun = await run({
      url: floor.url,
      connections: CONNECTIONS,
      duration: DURATION,
      requests: floor.requests,
    });
    round.floor = { rps: floorRun.requests.average, p50: floorRun.latency.p50, p99: floorRun.latency.p99 };
    rounds.push(round);
  }
  for (const replica of cluster.replicas) await cluster.setServing(replica.name, true);

  const of = (key, field) => median(rounds.map((round) => round[key][field]));
  const ratio = (size) => median(rounds.map((round) => round[size].rps / round.floor.rps));
  console.log(
    `connections=${CONNECTIONS} duration=${DURATION}s rounds=${ROUNDS} organizations=${ORGS} node=${process.version}; ` +
      'through HAProxy, one worker, one PostgreSQL',
  );
  console.log(
    '| replicas | traces/s | p50 ms | p99 ms | API CPU µs/trace | traces per batch | batches/s | busiest replica | ratio to floor |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const size of SIZES) {
    console.log(
      `| ${size} replica${size > 1 ? 's' : ''} | ${Math.round(of(size, 'rps'))} | ${of(size, 'p50')} | ${of(size, 'p99')} | ` +
        `${Math.round(of(size, 'cpuUs'))} | ${of(size, 'batch').toFixed(1)} | ${Math.round(of(size, 'commitsPerS'))} | ` +
        `${Math.round(of(size, 'busiest') * 100)} % | ${ratio(size).toFixed(2)} |`,
    );
  }
  console.log(
    `| floor (bare Fastify + pg insert) | ${Math.round(of('floor', 'rps'))} | ${of('floor', 'p50')} | ${of('floor', 'p99')} | | | | | |`,
  );
  for (let i = 1; i < SIZES.length; i++) {
    const [from, to] = [SIZES[i - 1], SIZES[i]];
    const throughput = of(to, 'rps') / of(from, 'rps');
    const p99 = of(to, 'p99') / of(from, 'p99');
    const held = throughput >= 0.9 && p99 <= 1.1;
    console.log(
      `adding a replica, ${from} → ${to}: throughput ×${throughput.toFixed(2)}, p99 ×${p99.toFixed(2)} ` +
        `(target: throughput ≥ ×0.90, p99 ≤ ×1.10) ${held ? 'held' : 'MISSED'}`,
    );
    if (!held) targetMissed();
  }
} finally {
  await floor?.close();
  await cluster.stop();
}
