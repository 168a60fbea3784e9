// The production artefact, tested as it ships. Builds it by following the Dockerfile (./dockerfile.mjs), then
// starts it as the image would: its ENTRYPOINT and CMD, ENV and working directory, as its USER's uid, nothing under
// the artefact writable, and (as root) in a PID namespace of its own, where the ENTRYPOINT is PID 1 and receives
// the stop signal as in a container. With NODE_ENV=production, PostgreSQL (a scratch database), Redis, the required
// secrets and Debian's Chromium, it drives it:
//   1. the image's HEALTHCHECK passes;
//   2. register, create an agent and a policy, ingest a trace the policy flags, decide its review item;
//   3. render the compliance PDF (the organization's name in its text);
//   4. verify the audit chain;
//   5. SIGTERM while a request is in flight: readiness turns 503 at once while requests are still served, then after
//      the drain (SHUTDOWN_DRAIN_MS, 5 s) no new connection is accepted, the in-flight request is answered
//      and committed, the process exits by itself;
//   6. start again on the same database: migrations are a no-op, the drained trace is there, the chain holds;
//   7. the worker, with docker-compose.yml's command: it starts and stops on SIGTERM.
// Exits 0 when all of it holds, 1 otherwise. Every wait is bounded.
//
//   node tools/artefact/smoke.mjs [--node <line>] [--reuse <out>] [<out>]
// --node runs the artefact on another Node.js line than the image's (CI: the Node.js 26 start-up);
// --reuse skips the build and runs the artefact already built in <out>. DATABASE_URL names the PostgreSQL
// server (default the local one), REDIS_URL the Redis (default the local one).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createScratchDatabase, freePort } from '../../bench/support.mjs';
import { build, durationMs, removeArtefact, ROOT } from './dockerfile.mjs';

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const [, value] = args.splice(at, 2);
  return value;
};
const nodeLine = option('--node');
const reuse = option('--reuse');
if (reuse && args[0]) throw new Error('--reuse <out> takes the artefact folder; give no other');
const out = resolve(reuse ?? args[0] ?? mkdtempSync(join(tmpdir(), 'gov-artefact-')));
const DATABASE = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const started = Date.now();
const log = (msg) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${msg}`);
let failures = 0;
function check(ok, what, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${!ok && detail ? `: ${detail}` : ''}`);
  if (!ok) failures += 1;
  return ok;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** `promise`, or `fallback` once `ms` have passed. */
const within = (promise, ms, fallback = undefined) => Promise.race([promise, sleep(ms).then(() => fallback)]);

// The image's user must reach the artefact: every folder above it must let others in. (setpriv's own exec would get
// through one that does not, with root's capabilities, and leave the service to fail later, or run this machine's
// node.)
for (let dir = dirname(out); dir !== dirname(dir); dir = dirname(dir)) {
  if ((statSync(dir).mode & 0o001) === 0) {
    console.log(`FAIL the image's user can reach the artefact: ${dir} does not let others in (chmod o+x it)`);
    process.exit(1);
  }
}

// --- the artefact ---------------------------------------------------------------------------------------------
let stage;
if (reuse) {
  stage = JSON.parse(readFileSync(join(out, 'stage.json'), 'utf8'));
} else {
  log(`building the artefact into ${out}`);
  stage = build(out);
}
const expectedLine = nodeLine ?? stage.line;
const imageNode = join(stage.root, 'usr/local/bin/node');
if (nodeLine) {
  const bin = execFileSync(join(ROOT, 'tools/runtimes/node.sh'), [nodeLine], { encoding: 'utf8' }).trim();
  chmodSync(imageNode, 0o755);
  copyFileSync(join(bin, 'node'), imageNode);
  chmodSync(imageNode, 0o555);
}
chmodSync(out, 0o755); // the artefact's own folder: from mkdtemp it would be 0700

// As root, the service runs as the image's uid (in a PID namespace of its own); as another user, as that user.
const asRoot = process.getuid?.() === 0;
const asUser = asRoot ? ['setpriv', `--reuid=${stage.uid}`, `--regid=${stage.uid}`, '--clear-groups', '--'] : [];
const inNamespace = asRoot ? ['unshare', '--pid', '--fork', '--kill-child', '--'] : [];
/** A program of the image: a bare name is looked up on the image's PATH (its /usr/local/bin holds node), never this machine's. */
const program = (name) => (name.includes('/') ? name : existsSync(join(stage.root, 'usr/local/bin', name)) ? join(stage.root, 'usr/local/bin', name) : `/usr/bin/${name}`);
/** The argv that runs `command` (ENTRYPOINT + CMD, or a HEALTHCHECK) as the image would. */
const argv = (command, { pid1 = false } = {}) => [...(pid1 ? inNamespace : []), ...asUser, program(command[0]), ...command.slice(1)];

// The image's node, run as its user, is the expected line and reads the working directory by its absolute path.
const probe = argv([imageNode, '-e', 'require("fs").readdirSync(process.argv[1]); process.stdout.write(process.version)', join(stage.root, stage.workdir)]);
const probed = spawnSync(probe[0], probe.slice(1), { encoding: 'utf8' });
const nodeVersion = probed.stdout.trim();
if (!nodeVersion.startsWith(`v${expectedLine}.`)) {
  console.log(
    `FAIL the image's node, run as uid ${asRoot ? stage.uid : process.getuid?.()}, is Node.js ${expectedLine} and reads ` +
      `${stage.workdir}: got "${nodeVersion}" ${probed.stderr.split('\n').find((l) => /Error/.test(l)) ?? ''}`,
  );
  process.exit(1);
}
log(`artefact: ${stage.root}, Node.js ${nodeVersion}, ENTRYPOINT ${JSON.stringify(stage.entrypoint)} CMD ${JSON.stringify(stage.cmd)}`);

const database = await createScratchDatabase(DATABASE);
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const env = {
  PATH: `${join(stage.root, 'usr/local/bin')}:/usr/sbin:/usr/bin:/sbin:/bin`,
  HOME: join(stage.root, stage.workdir),
  ...stage.env,
  PORT: String(port),
  DATABASE_URL: database.url,
  REDIS_URL: REDIS,
  JWT_SECRET: randomBytes(48).toString('base64'),
  ENCRYPTION_KEY: randomBytes(48).toString('base64'),
  AUDIT_SIGNING_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }),
  PUBLIC_URL: base,
  LOG_LEVEL: 'warn',
};
// The image's HOST (0.0.0.0) is kept: an image that listened on loopback only would be unreachable through a
// published port. Its paths (CHROMIUM_PATH, DATA_DIR) are the machine's here: Debian's Chromium is where the image
// has it, and DATA_DIR (/data) is not written when the database is PostgreSQL and the secrets are given.

/** The host pid of the namespace's PID 1 (the child `unshare --fork` made), or the process itself without one. */
async function initPid(child) {
  if (!inNamespace.length) return child.pid;
  for (let i = 0; i < 100; i++) {
    try {
      const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
      if (children) return Number(children.split(' ')[0]);
    } catch {
      /* not forked yet */
    }
    await sleep(20);
  }
  throw new Error('the PID namespace has no init process');
}

/** An exit that a stop signal explains: 0, the signal's 128 + n from an init such as tini, or the signal itself. */
const stoppedCleanly = (exit) => exit !== undefined && (exit.code === 0 || exit.code === 143 || exit.signal === stage.stopSignal);
const describeExit = (exit) => (exit === undefined ? 'still running' : exit.code !== null ? `exit code ${exit.code}` : `signal ${exit.signal}`);

/**
 * Spawns an argv of `argv()` in the image's working directory. `stop` signals the namespace's PID 1 (as `docker
 * stop` does) once `ready` has found it, the process itself before.
 */
function launch(command, environment, stdout) {
  const child = spawn(command[0], command.slice(1), { cwd: join(stage.root, stage.workdir), env: environment, stdio: ['ignore', stdout, 'inherit'] });
  const exited = new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
  const launched = { child, exited, pid: undefined, stop: (signal) => process.kill(launched.pid ?? child.pid, signal) };
  launched.ready = initPid(child).then((pid) => (launched.pid = pid));
  launched.ready.catch(() => undefined);
  return launched;
}

/** Starts ENTRYPOINT + CMD as the image would; resolves once the image's HEALTHCHECK passes. */
async function startService() {
  if (!stage.healthcheck) throw new Error('the Dockerfile has no HEALTHCHECK');
  const command = argv([...stage.entrypoint, ...stage.cmd], { pid1: true });
  const service = launch(command, env, 'inherit');
  const { child, exited } = service;
  try {
    await service.ready;
    const startPeriod = durationMs(stage.healthcheck.options['start-period'] ?? '0s') || 30_000;
    const deadline = Date.now() + startPeriod;
    while (Date.now() < deadline) {
      const early = await within(exited, 500);
      if (early) throw new Error(`the service exited during start-up (${describeExit(early)})`);
      if (healthcheck()) return service;
    }
    throw new Error(`the HEALTHCHECK did not pass within its start period (${startPeriod / 1000} s)`);
  } catch (err) {
    child.kill('SIGKILL');
    await within(exited, 5000);
    throw err;
  }
}

function healthcheck() {
  const command = argv(stage.healthcheck.command);
  const result = spawnSync(command[0], command.slice(1), {
    cwd: join(stage.root, stage.workdir),
    env,
    timeout: durationMs(stage.healthcheck.options.timeout ?? '30s'),
  });
  return result.status === 0;
}

/** The compose file's worker command on the artefact (the image's ENTRYPOINT kept): it starts, and stops on SIGTERM. */
async function startWorker() {
  const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
  const command = JSON.parse(/^ {2}worker:\n(?: {4}.*\n|\n)*? {4}command: (\[.*\])$/m.exec(compose)?.[1] ?? 'null');
  if (!check(Array.isArray(command), "docker-compose.yml's worker has a command")) return;
  const worker = launch(argv([...stage.entrypoint, ...command], { pid1: true }), { ...env, WORKERS: 'on', LOG_LEVEL: 'info' }, 'pipe');
  const { child, exited } = worker;
  let output = '';
  const ready = new Promise((done) =>
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Governance worker started')) done(true);
    }),
  );
  const outcome = await within(Promise.race([ready, exited]), 30_000, false);
  check(outcome === true, `the worker (${command.join(' ')}) starts`, typeof outcome === 'object' ? describeExit(outcome) : 'no start-up line in 30 s');
  await worker.ready.catch(() => undefined);
  worker.stop(stage.stopSignal);
  const exit = await within(exited, 15_000);
  check(stoppedCleanly(exit), `the worker stops on ${stage.stopSignal}: ${describeExit(exit)}`);
  if (!exit) child.kill('SIGKILL');
}

async function call(method, path, { token, key, body, expect } = {}) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(key ? { 'x-api-key': key } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  const json = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
  if (expect !== undefined && res.status !== expect) {
    throw new Error(`${method} ${path}: expected ${expect}, got ${res.status} ${text.slice(0, 300)}`);
  }
  return { status: res.status, json, headers: res.headers };
}

/** A POST /traces whose headers and first half of the body are sent now, and the rest on `finish()`. */
function halfSentTrace(key, body) {
  const payload = Buffer.from(JSON.stringify(body));
  const socket = connect(port, '127.0.0.1');
  let response = '';
  const answered = new Promise((done, fail) => {
    socket.on('data', (chunk) => (response += chunk));
    socket.on('end', () => done(response));
    socket.on('close', () => done(response));
    socket.on('error', fail);
  });
  answered.catch(() => undefined); // awaited later; a reset before then is read there, not an unhandled rejection
  const opened = new Promise((done, fail) => {
    socket.once('connect', done);
    socket.once('error', fail);
  });
  return {
    opened: opened.then(() =>
      socket.write(
        `POST /api/v1/traces HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
          `X-Api-Key: ${key}\r\nContent-Length: ${payload.length}\r\n\r\n${payload.subarray(0, payload.length >> 1)}`,
      ),
    ),
    finish: () => socket.write(payload.subarray(payload.length >> 1)),
    answered,
  };
}

const refused = () =>
  new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', (err) => done(err.code === 'ECONNREFUSED'));
  });

let service;
try {
  // 1. start-up and the HEALTHCHECK
  service = await startService();
  check(true, `the image's HEALTHCHECK passes (${nodeVersion}, uid ${asRoot ? stage.uid : process.getuid?.()}${inNamespace.length ? ', PID 1 in a namespace of its own' : ''})`);
  const health = await fetch(`${base}/health`).then((r) => r.json());
  check(health.status === 'ok' || health.data?.status === 'ok', 'GET /health reports ok', JSON.stringify(health));

  // 2. the decision pipeline
  const organizationName = `Artefact smoke ${randomBytes(3).toString('hex')}`;
  const owner = await call('POST', '/auth/register', {
    body: { name: 'Smoke Owner', email: `owner-${Date.now()}@example.com`, password: 'Smoke-pass-123', organizationName },
    expect: 201,
  });
  const token = owner.json.data.token;
  check(typeof token === 'string', 'register: 201 with a session');
  const agent = await call('POST', '/agents', { token, body: { name: 'smoke-agent' }, expect: 201 });
  const key = agent.json.data.apiKey;
  check(/^svc_agent_/.test(key), 'create an agent: 201 with its key');
  await call('POST', '/policies', {
    token,
    body: { name: 'Low confidence', outcome: 'flag', conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }] },
    expect: 201,
  });
  const flagged = await call('POST', '/traces', {
    key,
    body: { inputContext: { prompt: 'Refund order 7?' }, outputDecision: { action: 'refund', text: 'Refund 20 EUR.' }, confidence: 0.2 },
  });
  const flaggedOk = check(
    flagged.status === 202 && flagged.json?.code === 'SVC_FLAGGED_FOR_REVIEW' && flagged.json.data.status === 'flagged',
    'ingest a trace the policy flags: 202 SVC_FLAGGED_FOR_REVIEW',
    `${flagged.status} ${JSON.stringify(flagged.json)}`,
  );
  if (!flaggedOk) throw new Error('no flagged trace to review');
  const queue = await call('GET', '/review-queue', { token, expect: 200 });
  const item = queue.json.data.find((i) => i.id === flagged.json.data.reviewItemId);
  check(item?.traceId === flagged.json.data.id && item.status === 'pending', 'its review item is pending in the queue', JSON.stringify(queue.json).slice(0, 300));
  const decided = await call('POST', `/review-queue/${flagged.json.data.reviewItemId}/decision`, { token, body: { decision: 'approve', notes: 'smoke' } });
  check(decided.status === 200 || decided.status === 201, 'decide the review item', `${decided.status} ${JSON.stringify(decided.json)}`);
  const again = await call('POST', `/review-queue/${flagged.json.data.reviewItemId}/decision`, { token, body: { decision: 'reject' } });
  check(again.status === 409 && again.json?.code === 'ALREADY_DECIDED', 'a second decision: 409 ALREADY_DECIDED', String(again.status));

  // 3. the compliance PDF, printed by Debian's Chromium as the image's user
  const day = (offset) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const pdf = await fetch(`${base}/api/v1/reports/compliance?from=${day(-1)}&to=${day(1)}`, { headers: { authorization: `Bearer ${token}` } });
  const bytes = Buffer.from(await pdf.arrayBuffer());
  const pdfOk = check(
    pdf.status === 200 && pdf.headers.get('content-type') === 'application/pdf' && bytes.subarray(0, 5).toString() === '%PDF-',
    'render the compliance PDF: 200 application/pdf',
    `${pdf.status} ${bytes.subarray(0, 200).toString()}`,
  );
  if (pdfOk && spawnSync('pdftotext', ['-v']).status === 0) {
    const text = spawnSync('pdftotext', ['-', '-'], { input: bytes, encoding: 'utf8' }).stdout;
    check(text.includes(organizationName), "the PDF's text names the organization");
  }

  // 4. the audit chain
  const verified = await call('GET', '/audit/verify?full=true', { token, expect: 200 });
  check(verified.json.data.valid === true && verified.json.data.totalEntries >= 4, 'the audit chain verifies', JSON.stringify(verified.json.data));

  // 5. SIGTERM drains the request in flight
  const drained = halfSentTrace(key, { inputContext: { prompt: 'in flight' }, outputDecision: { action: 'answer', text: 'Answered.' }, confidence: 0.9 });
  await within(drained.opened, 5000);
  await sleep(300); // the request line and headers are read
  const signalled = Date.now();
  service.stop(stage.stopSignal);
  // The drain: readiness turns false at once, while requests are still served for SHUTDOWN_DRAIN_MS (5 s).
  let draining = false;
  for (let i = 0; i < 40 && !draining; i++) {
    const ready = await call('GET', '/health/ready').catch(() => ({ status: 0, json: undefined }));
    draining = ready.status === 503 && ready.json?.checks?.draining === true;
    if (!draining) await sleep(50);
  }
  check(draining, `after ${stage.stopSignal}, /health/ready answers 503 (draining) at once`);
  const live = await call('GET', '/health/live').catch(() => ({ status: 0 }));
  check(live.status === 200, `during the drain, requests are still served (/health/live ${live.status})`);
  let closed = false;
  for (let i = 0; i < 150 && !closed; i++) {
    closed = await refused();
    if (!closed) await sleep(100);
  }
  const closedAfter = Date.now() - signalled;
  check(closed && closedAfter >= 4500, `after the drain, new connections are refused (${closedAfter} ms after ${stage.stopSignal})`);
  drained.finish();
  const answer = (await within(drained.answered.catch((err) => `(${err.code})`), 15_000)) ?? '(no answer in 15 s)';
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
  const drainedId = /"id":"([^"]+)"/.exec(answer)?.[1];
  check(status === 201 && Boolean(drainedId), `the request in flight at ${stage.stopSignal} is answered 201`, answer.slice(0, 300));
  const exit = await within(service.exited, 15_000);
  check(stoppedCleanly(exit), `the process exits after draining: ${describeExit(exit)} after ${Date.now() - signalled} ms`);
  if (!exit) service.child.kill('SIGKILL');
  service = undefined;

  // 6. a second start on the same database
  service = await startService();
  check(true, 'a second start on the same database passes its HEALTHCHECK');
  if (drainedId) {
    const trace = await call('GET', `/traces/${drainedId}`, { token });
    check(trace.status === 200 && trace.json.data.id === drainedId, 'the trace answered during the drain was committed', String(trace.status));
  }
  const after = await call('GET', '/audit/verify?full=true', { token, expect: 200 });
  check(after.json.data.valid === true && after.json.data.totalEntries > verified.json.data.totalEntries, 'the audit chain still verifies, with the drained trace');
  const stopping = Date.now();
  service.stop(stage.stopSignal);
  const second = await within(service.exited, 15_000);
  check(stoppedCleanly(second), `the second run stops on ${stage.stopSignal}: ${describeExit(second)} after ${Date.now() - stopping} ms`);
  if (second) service = undefined;

  // 7. the worker, as docker-compose.yml runs it from the same image
  await startWorker();
} catch (err) {
  check(false, 'the smoke ran to its end', err instanceof Error ? err.stack : String(err));
} finally {
  if (service) {
    service.child.kill('SIGKILL');
    await within(service.exited, 5000);
  }
  await database.drop().catch(() => undefined);
  if (!reuse && !args[0]) removeArtefact(out);
}
log(`${failures === 0 ? 'artefact smoke passed' : `artefact smoke FAILED (${failures})`}`);
process.exit(failures === 0 ? 0 : 1);
