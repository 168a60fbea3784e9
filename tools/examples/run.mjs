// Runs the scripts of examples/ against the built service, as CI does. It builds nothing: `npm run build` and
// `npm run build:client` come first. It starts the service (dist/apps/api/src/main.js) on a free port with a
// scratch PostgreSQL database (bench/support.mjs), sets up through the HTTP API what the examples need (an owner, two
// agents, a read-only workspace key, a policy that flags and one that blocks, a webhook to the receiver), runs each
// example as a child process and plays the other side of it (the human reviewer, the agent whose traces get
// reviewed, the events a receiver gets), and prints one line per example: `ok <name>` or `FAIL <name>: <reason>`
// (a failing example's output follows on stderr; --verbose shows every example's). Exits 1 if any failed. Every
// wait is bounded, the whole run to 100 s; the service is stopped and the database dropped whatever happens,
// Ctrl-C included.
//
//   PATH="$(tools/runtimes/node.sh 24):$PATH" node tools/examples/run.mjs [--verbose] [<example> ...]
//
// Node.js 24 runs the examples' TypeScript as it is (type stripping). DATABASE_URL names the PostgreSQL server
// (default the local one, trust auth), REDIS_URL the Redis (default the local one).
/* global AbortController, AbortSignal */
import { execFileSync, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BENCH_AUDIT_SIGNING_KEY,
  createScratchDatabase,
  freePort,
  waitForHealth,
} from '../../bench/support.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
process.chdir(ROOT); // dist/ and examples/ are found from the working directory
const DATABASE = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const EXAMPLES = ['setup', 'agent-decisions', 'otel-agent', 'review-from-stream', 'webhook-receiver'];
const verbose = process.argv.includes('--verbose');
const only = process.argv.slice(2).filter((arg) => arg !== '--verbose');
for (const name of only) {
  if (!EXAMPLES.includes(name)) throw new Error(`unknown example "${name}" (${EXAMPLES.join(', ')})`);
}

const started = Date.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const oneLine = (text) => String(text).replace(/\s+/g, ' ').trim().slice(0, 400);

// Type stripping: unflagged from Node.js 22.18 and 23.6.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18) || (major === 23 && minor < 6)) {
  for (const name of only.length ? only : EXAMPLES) {
    console.log(
      `FAIL ${name}: Node.js ${process.versions.node} cannot run TypeScript; use Node.js 24 (tools/runtimes/node.sh 24)`,
    );
  }
  process.exit(1);
}

/** Aborted by Ctrl-C, SIGTERM or the time limit: the service's start gives up, and everything is cleaned up. */
const interrupt = new AbortController();
const interrupted = new Promise((_, fail) =>
  interrupt.signal.addEventListener('abort', () => fail(new Error('interrupted')), { once: true }),
);
interrupted.catch(() => undefined);

// --- the service ---------------------------------------------------------------------------------------------
/**
 * The built service on a free port and a scratch database, as `npm start` runs it. Resolves once /health
 * answers; throws (having cleaned up) if the process exits first or it is not healthy within 30 s.
 */
async function startService() {
  const database = await createScratchDatabase(DATABASE);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'gov-examples-'));
  const child = spawn(process.execPath, [join('dist', 'apps/api/src/main.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      // As `npm start` runs it: outside production, where a webhook to a local receiver may be allowed.
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      // One process, no load balancer to drain it from: SIGTERM closes at once.
      SHUTDOWN_DRAIN_MS: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      REDIS_URL: REDIS,
      PUBLIC_URL: base,
      JWT_SECRET: randomBytes(48).toString('base64'),
      AUDIT_SIGNING_KEY: BENCH_AUDIT_SIGNING_KEY,
      // The receiver listens on loopback, which the webhooks' SSRF guard refuses unless told otherwise (and which
      // the service refuses to be told in production).
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (chunk) => (log = (log + chunk).slice(-20_000));
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  const exited = new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
  let stopped;
  const stop = () =>
    (stopped ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        if (!(await Promise.race([exited, sleep(10_000)]))) child.kill('SIGKILL');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
      await database.drop();
    })());
  try {
    await Promise.race([
      interrupted,
      waitForHealth(base, Date.now() + 30_000),
      exited.then((exit) => {
        throw new Error(`the service exited during start-up (${describe(exit)}): ${lastLines(log)}`);
      }),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { base, stop, log: () => log };
}

const describe = (exit) => (exit.code !== null ? `exit code ${exit.code}` : `signal ${exit.signal}`);
const lastLines = (text, n = 5) => oneLine(text.trim().split('\n').slice(-n).join(' | '));

const starting = startService();
starting.catch(() => undefined);

/** Examples still running, killed on the way out. */
const running = new Set();
let cleaning;
/** Kills the examples still running, stops the service and drops its database (once). */
function cleanUp() {
  cleaning ??= (async () => {
    for (const child of running) child.kill('SIGKILL');
    const service = await starting.catch(() => undefined); // a start that failed has cleaned up after itself
    await service?.stop().catch((err) => console.error(`stopping the service: ${err.message}`));
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupt.abort();
    void cleanUp().then(() => process.exit(130));
  });
}
// The last resort: whatever hangs, the run ends (and cleans up) well inside CI's two minutes.
const hardStop = setTimeout(() => {
  console.log('FAIL examples: the run took more than 100 s');
  interrupt.abort();
  void cleanUp().then(() => process.exit(1));
}, 100_000);
hardStop.unref();

let base;
try {
  ({ base } = await starting);
} catch (err) {
  if (!interrupt.signal.aborted) {
    for (const name of only.length ? only : EXAMPLES) console.log(`FAIL ${name}: ${oneLine(err.message)}`);
  }
  await cleanUp();
  process.exit(interrupt.signal.aborted ? 130 : 1);
}

/** A call to the API; `expect` is the status required (a number or a list). Answers the parsed envelope. */
async function api(method, path, { token, key, body, expect } = {}) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(key ? { 'x-api-key': key } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  const statuses = expect === undefined ? [] : [expect].flat();
  if (statuses.length && !statuses.includes(res.status)) {
    throw new Error(
      `${method} ${path}: expected ${statuses.join(' or ')}, got ${res.status} ${oneLine(text)}`,
    );
  }
  return { status: res.status, ...(text ? JSON.parse(text) : {}) };
}

// --- an example as a child process -----------------------------------------------------------------------------
/** Starts examples/<name>.ts with `env` (and no GOVERNANCE_* or WEBHOOK_* of this shell's). */
function launch(name, env) {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(GOVERNANCE_|WEBHOOK_|REVIEW_|LAST_EVENT_ID|DATABASE_URL)/.test(k),
    ),
  );
  const child = spawn(process.execPath, [join('examples', `${name}.ts`)], {
    env: { ...inherited, NO_COLOR: '1', GOVERNANCE_URL: base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  let exit;
  const exited = new Promise((done) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      exit = { code, signal };
      done(exit);
    }),
  );
  const run = {
    child,
    output: () => output,
    /** Resolves once the output matches `pattern`; throws if the example exits first or `ms` pass. */
    async waitFor(pattern, ms, what = String(pattern)) {
      const deadline = Date.now() + ms;
      while (!pattern.test(output)) {
        if (exit) throw new Error(`exited (${describe(exit)}) before printing ${what}`);
        if (Date.now() > deadline) throw new Error(`printed no ${what} within ${ms / 1000} s`);
        await sleep(50);
      }
    },
    /** Waits for `ms` for the example to exit by itself and requires exit code 0. */
    async finished(ms) {
      const result = await Promise.race([exited, sleep(ms).then(() => undefined)]);
      if (!result) {
        child.kill('SIGKILL');
        throw new Error(`did not exit within ${ms / 1000} s`);
      }
      if (result.code !== 0) throw new Error(describe(result));
    },
    /** SIGTERM (as Ctrl-C or a process manager would stop it), then requires exit code 0. */
    async stop(ms = 5000) {
      if (!exit) child.kill('SIGTERM');
      await this.finished(ms);
    },
    /** Asserts the output matches each pattern. */
    printed(...patterns) {
      for (const pattern of patterns)
        if (!pattern.test(output)) throw new Error(`printed nothing matching ${pattern}`);
    },
    get exited() {
      return exit;
    },
  };
  launched.push(run);
  return run;
}

/** Polls `probe` until it returns something truthy; throws when the example `run` exits first or `ms` pass. */
async function until(probe, run, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (run.exited) throw new Error(`exited (${describe(run.exited)}) while the runner waited for ${what}`);
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms / 1000} s`);
    await sleep(100);
  }
}

let failures = 0;
/** The examples launched by the current step: their output is shown on failure (and with --verbose). */
let launched = [];
async function example(name, body, label = name) {
  if (only.length && !only.includes(name)) return;
  launched = [];
  const show = () => {
    for (const run of launched) {
      const output = run.output().trimEnd();
      if (output) console.error(output.replace(/^/gm, `  ${name} | `));
    }
  };
  try {
    await body();
    console.log(`ok ${label}`);
    if (verbose) show();
  } catch (err) {
    failures += 1;
    if (interrupt.signal.aborted) return; // the examples were killed: nothing to report
    console.log(`FAIL ${label}: ${oneLine(err instanceof Error ? err.message : err)}`);
    show();
    if (!launched.length && err instanceof Error) console.error(err.stack);
  }
}

// --- what the examples need, through the HTTP API ----------------------------------------------------------------
/** A refund the agent is unsure of: the low-confidence policy flags it. */
const refund = (amount, orderId) => ({
  inputContext: {
    prompt: `Order ${orderId} arrived damaged; the customer asks for a refund of ${amount} EUR.`,
  },
  outputDecision: {
    action: 'issue_refund',
    text: `Refund ${amount} EUR for order ${orderId}.`,
    toolCalls: [{ name: 'issue_refund', arguments: { orderId, amount, currency: 'EUR' } }],
  },
  confidence: 0.3,
});

try {
  const owner = await api('POST', '/auth/register', {
    body: {
      name: 'Examples Owner',
      email: `examples-${randomBytes(4).toString('hex')}@example.com`,
      password: 'Examples-pass-123',
      organizationName: 'Examples',
    },
    expect: 201,
  });
  const token = owner.data.token;
  const workspaceKey = (
    await api('POST', '/auth/keys', {
      token,
      body: { name: 'examples, read-only', scope: { readOnly: true } },
      expect: 201,
    })
  ).data.key;
  const support = (await api('POST', '/agents', { token, body: { name: 'support-agent' }, expect: 201 }))
    .data;
  const instrumented = (await api('POST', '/agents', { token, body: { name: 'otel-agent' }, expect: 201 }))
    .data;
  await api('POST', '/policies', { token, body: { templateId: 'low-confidence' }, expect: 201 });
  await api('POST', '/policies', {
    token,
    body: {
      name: 'Destructive tool calls',
      outcome: 'block',
      conditions: [{ field: 'toolCalls.name', operator: 'matches', value: '^(delete|drop|wipe)_' }],
    },
    expect: 201,
  });
  const ingest = (body, expect) => api('POST', '/traces', { key: support.apiKey, body, expect });

  // setup.ts: what a reader runs first against `npm start`; it prints the variables the others read.
  await example('setup', async () => {
    const run = launch('setup', { GOVERNANCE_TOKEN: token });
    await run.finished(20_000);
    // Single-quoted for the shell, so that `eval` takes each value as it is.
    run.printed(
      /^export GOVERNANCE_URL='[^']+'$/m,
      /^export GOVERNANCE_AGENT_KEY='svc_agent_[^'\s]+'$/m,
      /^export GOVERNANCE_API_KEY='svc_live_[^'\s]+'$/m,
    );
    // What a reader's `eval "$(node examples/setup.ts)"` gives: the values, unchanged.
    const exports = run
      .output()
      .split('\n')
      .filter((line) => line.startsWith('export '))
      .join('\n');
    const evaluated = execFileSync(
      '/bin/sh',
      [
        '-c',
        'eval "$1"; printf "%s\\n" "$GOVERNANCE_URL" "$GOVERNANCE_AGENT_KEY" "$GOVERNANCE_API_KEY"',
        'sh',
        exports,
      ],
      { encoding: 'utf8', env: { PATH: process.env.PATH } },
    ).split('\n');
    if (
      evaluated[0] !== base ||
      !/^svc_agent_\S+$/.test(evaluated[1]) ||
      !/^svc_live_\S+$/.test(evaluated[2])
    ) {
      throw new Error(
        `eval of its export lines gave ${oneLine(evaluated.join(' | ').replace(/svc_\w+/g, 'svc_…'))}`,
      );
    }
  });

  // agent-decisions.ts: three decisions, one of each verdict; the runner is the human who approves the flagged one.
  await example('agent-decisions', async () => {
    const run = launch('agent-decisions', {
      GOVERNANCE_AGENT_KEY: support.apiKey,
      GOVERNANCE_API_KEY: workspaceKey,
      REVIEW_POLL_MS: '200',
    });
    const item = await until(
      async () => (await api('GET', `/review-queue?agentId=${support.id}`, { token, expect: 200 })).data[0],
      run,
      20_000,
      'a pending review item from the agent',
    );
    await api('POST', `/review-queue/${item.id}/decision`, {
      token,
      body: { decision: 'approve', notes: 'Approved by the examples runner.' },
      expect: 200,
    });
    await run.finished(20_000);
    run.printed(
      /approved → proceeding/,
      /waiting for a human review/,
      /review approved → proceeding/,
      /blocked .*→ refusing/,
    );
  });

  // agent-decisions.ts again, against a stand-in for the service that flags every decision and then stops
  // answering (a 503, a dropped connection, in turn): the wait for the review is bounded, and the agent gives up.
  await example(
    'agent-decisions',
    async () => {
      let reads = 0;
      const standIn = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          if (req.method === 'POST' && req.url === '/api/v1/traces') {
            const id = randomBytes(12).toString('hex');
            res.writeHead(202, { 'content-type': 'application/json' }).end(
              JSON.stringify({
                success: true,
                data: {
                  id,
                  status: 'flagged',
                  confidence: 0.4,
                  reviewItemId: randomBytes(12).toString('hex'),
                },
              }),
            );
            return;
          }
          reads += 1;
          if (reads % 2 === 0) {
            res.destroy();
            return;
          }
          res
            .writeHead(503, { 'content-type': 'application/json' })
            .end(JSON.stringify({ success: false, error: 'Down', code: 'SERVICE_UNAVAILABLE' }));
        });
      });
      const port = await freePort();
      await new Promise((resolve) => standIn.listen(port, '127.0.0.1', resolve));
      try {
        const run = launch('agent-decisions', {
          GOVERNANCE_URL: `http://127.0.0.1:${port}`,
          GOVERNANCE_AGENT_KEY: 'svc_agent_stand-in',
          GOVERNANCE_API_KEY: 'svc_live_stand-in',
          REVIEW_TIMEOUT_MS: '800',
          REVIEW_POLL_MS: '100',
        });
        await run.finished(15_000);
        run.printed(/no answer from the service in time → not proceeding/);
        if (reads < 2) throw new Error(`read the trace ${reads} time(s) while it waited`);
      } finally {
        standIn.closeAllConnections();
        await new Promise((resolve) => standIn.close(resolve));
      }
    },
    'agent-decisions (the service down while it waits)',
  );

  // otel-agent.ts: its spans become traces of its agent, which the runner finds too.
  await example('otel-agent', async () => {
    const run = launch('otel-agent', {
      GOVERNANCE_AGENT_KEY: instrumented.apiKey,
      GOVERNANCE_API_KEY: workspaceKey,
    });
    await run.finished(30_000);
    const traces = (await api('GET', `/traces?agentId=${instrumented.id}`, { token, expect: 200 })).data;
    const fromOtlp = traces.filter((t) => t.metadata?.source === 'otlp');
    if (fromOtlp.length === 0) throw new Error('exited 0, but its agent has no trace from OTLP');
    run.printed(/execute_tool/);
  });

  // review-from-stream.ts, from scratch (no LAST_EVENT_ID): one flagged trace waits in the queue before it starts,
  // one is flagged while it starts (it may land in the backlog or on the stream, or between the two: the script
  // opens the stream before it reads the backlog, so it misses none), one once it listens. It decides all three.
  await example('review-from-stream', async () => {
    const small = (await ingest(refund(20, 'A-100'), 202)).data;
    const run = launch('review-from-stream', {
      GOVERNANCE_TOKEN: token,
      REVIEW_LIMIT: '3',
      REFUND_LIMIT_EUR: '100',
    });
    const medium = (await ingest(refund(60, 'A-101'), 202)).data;
    await run.waitFor(/listening/, 15_000, '"listening"');
    const large = (await ingest(refund(480, 'A-102'), 202)).data;
    await run.finished(20_000);
    const statusOf = async (id) => (await api('GET', `/traces/${id}`, { token, expect: 200 })).data.status;
    for (const [trace, amount, expected] of [
      [small, 20, 'approved'],
      [medium, 60, 'approved'],
      [large, 480, 'blocked'],
    ]) {
      const status = await statusOf(trace.id);
      if (status !== expected) throw new Error(`the ${amount} EUR refund is ${status}, not ${expected}`);
    }
    run.printed(/approve/, /reject/, /resume with LAST_EVENT_ID=[0-9a-f]{24}$/m);
  });

  // webhook-receiver.ts: a signed test event and a flagged trace are verified and handled; a forged request is not.
  await example('webhook-receiver', async () => {
    const port = await freePort();
    const webhook = (
      await api('POST', '/webhooks', {
        token,
        body: {
          url: `http://127.0.0.1:${port}/webhooks/governance`,
          events: ['trace.flagged', 'trace.blocked', 'review.completed', 'webhook.test'],
          description: 'examples/webhook-receiver.ts',
        },
        expect: 201,
      })
    ).data;
    const run = launch('webhook-receiver', { WEBHOOK_SECRET: webhook.secret, WEBHOOK_PORT: String(port) });
    try {
      await run.waitFor(/listening/, 15_000, '"listening"');
      const test = (await api('POST', `/webhooks/${webhook.id}/test`, { token, expect: 200 })).data;
      if (test.status !== 'succeeded') {
        throw new Error(
          `the test delivery ${test.status}: ${test.responseStatus ?? ''} ${test.error ?? test.responseBody ?? ''}`,
        );
      }
      const flagged = (await ingest(refund(35, 'A-102'), 202)).data;
      // The receiver names the trace once it has verified and handled its event.
      await run.waitFor(new RegExp(flagged.id), 15_000, `the trace.flagged event of trace ${flagged.id}`);
      run.printed(/verified webhook\.test/, /verified trace\.flagged/);

      // Signed with another secret: the receiver must refuse it, and say so.
      const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} });
      const id = `msg_${randomBytes(8).toString('hex')}`;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const forgedKey = randomBytes(32);
      const signature = createHmac('sha256', forgedKey).update(`${id}.${timestamp}.${body}`).digest('base64');
      const forged = await fetch(`http://127.0.0.1:${port}/webhooks/governance`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': timestamp,
          'webhook-signature': `v1,${signature}`,
        },
        body,
        signal: AbortSignal.timeout(5000),
      });
      if (forged.status < 400 || forged.status >= 500)
        throw new Error(`a forged delivery was answered ${forged.status}`);
      await run.waitFor(new RegExp(`refused delivery ${id}`), 2000, `the refusal of ${id}`);
      await run.stop();
    } finally {
      if (!run.exited) run.child.kill('SIGKILL');
    }
  });
} catch (err) {
  failures += 1;
  if (!interrupt.signal.aborted) {
    console.log(`FAIL examples: ${oneLine(err instanceof Error ? err.message : err)}`);
    if (err instanceof Error) console.error(err.stack);
  }
} finally {
  await cleanUp();
}
console.log(
  `${failures === 0 ? 'examples passed' : `examples FAILED (${failures})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
process.exit(failures === 0 ? 0 : 1);
