// Shared plumbing of the benchmark scripts: a free port, the built service started as a child process (PGlite in
// a temporary directory, or a scratch database on the server of DATABASE_URL), its health wait, its CPU time, and
// autocannon runs.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';

/**
 * BENCH_SMOKE=1: a run at a tiny size that only shows the benchmark still works (CI runs every one so). A missed
 * performance target is printed but does not fail the run; an error or a wrong result still does.
 */
export const SMOKE = Boolean(process.env.BENCH_SMOKE);

/** A performance target was missed: the run exits 1, except in a smoke run, whose figures mean nothing. */
export function targetMissed() {
  if (!SMOKE) process.exitCode = 1;
}

/** The Ed25519 key that signs audit checkpoints in production; one per benchmark run. */
export const BENCH_AUDIT_SIGNING_KEY = generateKeyPairSync('ed25519').privateKey.export({
  type: 'pkcs8',
  format: 'pem',
});

export const freePort = () =>
  new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

export async function waitForHealth(base, deadline = Date.now() + 60_000) {
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

/**
 * Starts the built service (`dist/apps/api/src/main.js`, or under BENCH_DIST) on a free port with production settings and the auth limiter raised (the
 * benchmarks measure request paths, not the limiter). `env` adds or overrides variables; `args` go to node.
 */
export async function startService({ env = {}, args = [] } = {}) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'gov-bench-'));
  const database = process.env.DATABASE_URL
    ? await createScratchDatabase(process.env.DATABASE_URL)
    : undefined;
  const child = spawn(
    process.execPath,
    [...args, join(process.env.BENCH_DIST ?? 'dist', 'apps/api/src/main.js')],
    {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
        JWT_SECRET: 'bench-secret-'.padEnd(48, 'x'),
        AUDIT_SIGNING_KEY: BENCH_AUDIT_SIGNING_KEY,
        AUTH_RATE_LIMIT_MAX: '1000000000',
        ...(database ? { DATABASE_URL: database.url } : {}),
        ...env,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const base = `http://127.0.0.1:${port}`;
  const stop = async (signal = 'SIGTERM') => {
    // A child that died of a signal has a null exitCode too, and no 'exit' left to wait for.
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dataDir, { recursive: true, force: true });
    // BENCH_KEEP_DB=1 leaves the scratch database for a look at its plans (its name is printed).
    if (process.env.BENCH_KEEP_DB) console.log(`kept database ${database?.name}`);
    await (process.env.BENCH_KEEP_DB ? database?.close() : database?.drop());
  };
  try {
    await waitForHealth(base);
  } catch (err) {
    await stop();
    throw err;
  }
  return { base, port, pid: child.pid, child, stop, databaseUrl: database?.url };
}

const withDb = (url, name) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();

/** A new, empty database on the server of `url`, dropped by `drop()`: benchmarks never touch existing data. */
export async function createScratchDatabase(url) {
  const name = `gov_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: withDb(url, 'postgres') });
  await admin.connect();
  await admin.query(`create database ${name}`);
  return {
    name,
    url: withDb(url, name),
    close: () => admin.end(),
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux

/** CPU time (user + system) a process has used so far, in milliseconds, read from /proc (Linux only). */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command name: state is field 3, utime 14, stime 15 (1-based), i.e. indexes 11 and 12 here.
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

export function autocannonRun(opts) {
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

/** Registers a user with a new organization and returns its token. */
export async function registerOwner(base, prefix = 'bench') {
  return (await registerOrganization(base, prefix)).token;
}

/** Registers a user with a new organization: its owner's token and id, and the organization's id. */
export async function registerOrganization(base, prefix = 'bench') {
  const res = await fetch(`${base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Bench',
      email: `${prefix}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
      password: 'Bench-pass-123',
      organizationName: 'Bench',
    }),
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${await res.text()}`);
  const { data } = await res.json();
  return { token: data.token, userId: data.user.id, orgId: data.organization.id };
}
