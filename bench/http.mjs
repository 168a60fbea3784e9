// Benchmark of the foundation's hot paths: GET /health and an authenticated GET /auth/me (JWT verification,
// jti blacklist and membership lookup). Starts the built service on a free port (a scratch database on the
// PostgreSQL of DATABASE_URL when it is set, else the embedded PGlite in a temporary directory), drives it with
// autocannon, prints the figures.
//
// Then the hostile run: the same two routes called together, first alone and then while one more client sends a
// body of 50,000 unknown keys to POST /auth/login in a loop. Their p99 must stay within 2x of the run without it.
// BENCH_DURATION (seconds per row), BENCH_CONNECTIONS, BENCH_SMOKE (support.mjs).
import { autocannonRun, registerOwner, startService, targetMissed } from './support.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const HOSTILE_FACTOR = 2;

const service = await startService();
const driver = process.env.DATABASE_URL ? 'postgres' : 'pglite';
try {
  const token = await registerOwner(service.base);
  const me = { authorization: `Bearer ${token}` };

  const rows = [];
  for (const [name, path, headers, connections] of [
    ['GET /health', '/health', {}, 1],
    ['GET /health', '/health', {}, CONNECTIONS],
    ['GET /api/v1/auth/me (JWT)', '/api/v1/auth/me', me, 1],
    ['GET /api/v1/auth/me (JWT)', '/api/v1/auth/me', me, CONNECTIONS],
  ]) {
    const r = await autocannonRun({ url: `${service.base}${path}`, connections, duration: DURATION, headers });
    rows.push({
      route: name,
      connections,
      'req/s': Math.round(r.requests.average),
      'p50 ms': r.latency.p50,
      'p99 ms': r.latency.p99,
      'max ms': r.latency.max,
      non2xx: r.non2xx,
      errors: r.errors,
    });
  }
  console.log(`driver=${driver} duration=${DURATION}s per row node=${process.version}`);
  console.table(rows);
  // A row of error answers measures the error path: say so rather than print it as a figure.
  if (rows.some((r) => r.non2xx > 0 || r.errors > 0)) {
    console.error('some rows had non-2xx answers or errors: their figures do not measure the route');
    process.exitCode = 1;
  }

  // The hostile run. Each victim route gets half the connections.
  const victims = (duration) =>
    Promise.all([
      autocannonRun({ url: `${service.base}/health`, connections: CONNECTIONS / 2, duration }),
      autocannonRun({ url: `${service.base}/api/v1/auth/me`, connections: CONNECTIONS / 2, duration, headers: me }),
    ]);
  const wide = `{${Array.from({ length: 50_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
  const baseline = await victims(DURATION);
  const [underAttack, hostile] = await Promise.all([
    victims(DURATION),
    autocannonRun({
      url: `${service.base}/api/v1/auth/login`,
      connections: 1,
      duration: DURATION,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: wide,
    }),
  ]);
  const hostileRows = ['GET /health', 'GET /api/v1/auth/me (JWT)'].map((route, i) => ({
    route,
    connections: CONNECTIONS / 2,
    'p99 ms alone': baseline[i].latency.p99,
    'p99 ms with hostile client': underAttack[i].latency.p99,
    ratio: Number((underAttack[i].latency.p99 / Math.max(1, baseline[i].latency.p99)).toFixed(2)),
    'req/s with hostile client': Math.round(underAttack[i].requests.average),
    non2xx: underAttack[i].non2xx,
  }));
  console.log(
    `hostile client: 1 connection sending ${Math.round(wide.length / 1024)} KiB of 50,000 unknown keys to ` +
      `POST /api/v1/auth/login in a loop, ${Math.round(hostile.requests.average)} req/s, ` +
      `answers ${JSON.stringify(hostile.statusCodeStats)}`,
  );
  console.table(hostileRows);
  if (hostileRows.some((r) => r.non2xx > 0)) {
    console.error('a route failed under the hostile client');
    process.exitCode = 1;
  }
  if (hostileRows.some((r) => r.ratio > HOSTILE_FACTOR)) {
    console.error(`a route's p99 grew more than ${HOSTILE_FACTOR}x under the hostile client`);
    targetMissed();
  }
} finally {
  await service.stop();
}
