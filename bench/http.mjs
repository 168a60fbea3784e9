// Benchmark of the foundation's hot paths: GET /health and an authenticated GET /auth/me (JWT verification,
// jti blacklist and membership lookup). Starts the built service on a free port (PostgreSQL when DATABASE_URL
// is set, else the embedded PGlite in a temporary directory), drives it with autocannon, prints the figures.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);

const freePort = () =>
  new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

async function waitForHealth(base, deadline = Date.now() + 60_000) {
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('service did not become healthy');
}

function run(url, headers, connections) {
  return new Promise((resolve, reject) =>
    autocannon({ url, connections, duration: DURATION, headers }, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

const port = await freePort();
const dataDir = mkdtempSync(join(tmpdir(), 'gov-bench-'));
const driver = process.env.DATABASE_URL ? 'postgres' : 'pglite';
const server = spawn(process.execPath, ['dist/apps/api/src/main.js'], {
  // The auth limiter (100 requests per IP per 15 minutes on /auth) would answer 429 to the /auth/me rows: this
  // measures the request path, not the limiter.
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', NODE_ENV: 'production', JWT_SECRET: 'bench-secret-'.padEnd(48, 'x'), AUTH_RATE_LIMIT_MAX: '1000000000' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
try {
  await waitForHealth(base);
  const email = `bench-${Date.now()}@example.com`;
  const reg = await fetch(`${base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', email, password: 'Bench-pass-123', organizationName: 'Bench' }),
  });
  const token = (await reg.json()).data.token;

  const rows = [];
  const me = { authorization: `Bearer ${token}` };
  for (const [name, url, headers, connections] of [
    ['GET /health', `${base}/health`, {}, 1],
    ['GET /health', `${base}/health`, {}, CONNECTIONS],
    ['GET /api/v1/auth/me (JWT)', `${base}/api/v1/auth/me`, me, 1],
    ['GET /api/v1/auth/me (JWT)', `${base}/api/v1/auth/me`, me, CONNECTIONS],
  ]) {
    const r = await run(url, headers, connections);
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
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
