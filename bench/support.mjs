// Shared plumbing of the benchmark scripts: a free port, the built service started as a child process (PGlite in
// a temporary directory, or a scratch database on the server of DATABASE_URL), its health wait, its CPU time and
// memory, autocannon runs; for the benchmarks that seed PostgreSQL with SQL, an organization with its agents, the
// indexes dropped during a load, audit entries inserted in batches; timed requests and their percentiles.
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
        // One process, no load balancer to drain it from: SIGTERM closes at once.
        SHUTDOWN_DRAIN_MS: '0',
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

/** The server the PostgreSQL benchmarks use when DATABASE_URL is not set. */
const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The service on a scratch database of the PostgreSQL server of DATABASE_URL (the local server if unset), with a
 * pool of two connections to that database for seeding it with SQL. `env` is added to the service's variables.
 */
export async function startOnPostgres(env = {}) {
  process.env.DATABASE_URL = process.env.DATABASE_URL ?? LOCAL_POSTGRES;
  const server = await startService({ env: { DATABASE_POOL_MAX: '10', LOG_LEVEL: 'warn', ...env } });
  const db = new pg.Pool({ connectionString: server.databaseUrl, max: 2 });
  const stop = async () => {
    await db.end();
    await server.stop();
  };
  return { server, base: server.base, db, stop };
}

/** The body of a JSON answer; throws unless its status is one of `expected`. */
export async function expectJson(res, expected = [200, 201]) {
  const body = await res.json();
  if (!expected.includes(res.status)) throw new Error(`${res.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * An organization for a benchmark that seeds with SQL: registered over HTTP, put on `plan` with SQL (the database of
 * `db`), and `agents` agents created over HTTP (their creation is audited, as a customer's would be), named by
 * `agentName`. Returns the owner's token and id, the organization's id, the owner's auth header, the agents' ids.
 */
export async function seedOrganization(
  { base, db },
  { prefix, plan, agents, agentName = (i) => `agent-${i}` },
) {
  const owner = await registerOrganization(base, prefix);
  const auth = { authorization: `Bearer ${owner.token}` };
  await db.query(`update organizations set plan = $2 where id = $1`, [owner.orgId, plan]);
  const agentIds = [];
  for (let i = 0; i < agents; i++) {
    const res = await fetch(`${base}/api/v1/agents`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: agentName(i) }),
    });
    agentIds.push((await expectJson(res)).data.id);
  }
  return { ...owner, auth, agentIds };
}

/**
 * Drops the indexes of `tables` that no constraint needs (a bulk load is faster without them, and they are built once
 * after it); returns them for `rebuildIndexes`.
 */
export async function dropIndexes(db, tables) {
  const { rows } = await db.query(
    `select c.relname as name, pg_get_indexdef(i.indexrelid) as def
       from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = any($1::text[]::regclass[])
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`,
    [tables],
  );
  for (const index of rows) await db.query(`drop index "${index.name}"`);
  return rows;
}

export async function rebuildIndexes(db, indexes) {
  for (const index of indexes) await db.query(index.def);
}

/** Columns of audit_entries rows, filled by `addAuditRow` and written by `insertAuditEntries`. */
export const auditRows = () => ({
  id: [],
  sequence: [],
  eventType: [],
  actor: [],
  targetId: [],
  metadata: [],
  ip: [],
  userAgent: [],
  createdAt: [],
  prevHash: [],
  hash: [],
});

/** Adds the entry of a trace (as the trace writer appends it: no user, the target a trace) with its hashes. */
export function addAuditRow(rows, id, entry, prevHash, hash) {
  rows.id.push(id);
  rows.sequence.push(entry.sequence);
  rows.eventType.push(entry.eventType);
  rows.actor.push(JSON.stringify(entry.actor));
  rows.targetId.push(entry.targetId);
  rows.metadata.push(JSON.stringify(entry.metadata));
  rows.ip.push(entry.ip);
  rows.userAgent.push(entry.userAgent);
  rows.createdAt.push(entry.createdAt.toISOString());
  rows.prevHash.push(prevHash);
  rows.hash.push(hash);
}

/** Inserts the rows of `auditRows` into the organization's chain in one statement. */
export async function insertAuditEntries(db, organizationId, rows) {
  await db.query(
    `insert into audit_entries (id, organization_id, sequence, event_type, user_id, actor, target_type, target_id,
       metadata, ip, user_agent, created_at, prev_hash, hash)
     select e.id, $1, e.sequence, e.event_type, null, e.actor, 'trace', e.target_id, e.metadata, e.ip,
       e.user_agent, e.created_at, e.prev_hash, e.hash
     from unnest($2::text[], $3::bigint[], $4::text[], $5::jsonb[], $6::text[], $7::jsonb[], $8::text[],
                 $9::text[], $10::timestamptz[], $11::text[], $12::text[])
       as e(id, sequence, event_type, actor, target_id, metadata, ip, user_agent, created_at, prev_hash, hash)`,
    [
      organizationId,
      rows.id,
      rows.sequence,
      rows.eventType,
      rows.actor,
      rows.targetId,
      rows.metadata,
      rows.ip,
      rows.userAgent,
      rows.createdAt,
      rows.prevHash,
      rows.hash,
    ],
  );
}

/** A field of /proc/<pid>/status in KiB (VmRSS, VmHWM), or undefined (Linux only; undefined once it has gone). */
export function procStatusKib(pid, field) {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The value at percentile `p` of ascending `sorted` (nearest rank). */
export const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/**
 * A GET with `headers`, timed until its body has arrived (the client's parse is not the service's time); throws
 * unless it answers 200. The body parsed as JSON, else as text.
 */
export async function timedGet(base, path, headers) {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, { headers });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { ms, body };
}

/**
 * `request` (answering `{ms, body}`) `warmups` times, then `repeat` times one at a time: the p50 and p99 of those,
 * and the body of the last.
 */
export async function timeRepeated(request, { warmups, repeat }) {
  for (let i = 0; i < warmups; i++) await request();
  const times = [];
  let body;
  for (let i = 0; i < repeat; i++) {
    const r = await request();
    times.push(r.ms);
    body = r.body;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), body };
}
