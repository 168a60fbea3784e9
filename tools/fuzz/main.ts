// Route fuzzer: starts the built service, reads its OpenAPI document, and sends every operation, with each
// credential kind it accepts and with none, hostile requests derived from the document (see docs/security.md, "Route
// fuzzer"). Variables: FUZZ_SEED, FUZZ_BUDGET, FUZZ_ONLY, FUZZ_MAX_MS, FUZZ_SUMMARY.
import { writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { Credentials, SELF_AGENT_ID, isScimGuarded } from './credentials.js';
import type { CredKind, Draft, RequestContext } from './draft.js';
import { batchArb, batchSeed, credentialKinds, schemeCredentials } from './hostile.js';
import { HttpClient, type WireRequest } from './http-client.js';
import {
  SchemaResolver,
  filterOperations,
  listOperations,
  type OpenApiDoc,
  type Operation,
} from './openapi.js';
import { judge } from './oracles.js';
import { failureReport, statusClass, summaryLine, table, type Failure, type OpStats } from './report.js';
import { startService, type RunningService } from './service.js';

/** CI's budget: requests per operation per credential kind (each batch starts with one request per mutator). */
export const DEFAULT_BUDGET = 24;
/** Wide bodies shrink to this many members once WIDE_SLOW_LIMIT operations have been slow with the full size. */
const WIDE_KEYS = 50_000;
const WIDE_KEYS_REDUCED = 2_000;
const WIDE_SLOW_LIMIT = 3;
/** Uploads above this size are resent once after a connection reset (see the loop). */
const LARGE_BODY = 256 * 1024;

const intEnv = (name: string, fallback: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
};

const POOL = /@@pool:([^@]+):(\d+)@@/g;
const CRED = /@@cred:(jwt|workspaceKey|agentKey|scim)@@/g;
const SELF_AGENT = new RegExp(SELF_AGENT_ID, 'g');
const NO_SUCH_ID = 'ffffffffffffffffffffffff';

/** Replaces credential and pool placeholders; works on Latin-1 text so that body bytes pass through unchanged. */
function resolvePlaceholders(text: string, creds: Credentials): string {
  return text
    .replace(SELF_AGENT, () => creds.agentId)
    .replace(CRED, (_m, kind: Exclude<CredKind, 'none'>) => creds.value(kind))
    .replace(POOL, (_m, pool: string, n: string) => {
      const values = creds.pools.get(pool);
      return values && values.length > 0 ? values[Number(n) % values.length]! : NO_SUCH_ID;
    });
}

function materialize(d: Draft, op: Operation, creds: Credentials): WireRequest {
  let path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => d.pathParams[name] ?? 'x');
  if (d.query.length > 0) path += `?${d.query.join('&')}`;
  const body =
    d.body && d.body.includes('@@')
      ? Buffer.from(resolvePlaceholders(d.body.toString('latin1'), creds), 'latin1')
      : d.body;
  return {
    method: d.method,
    path: resolvePlaceholders(path, creds),
    headers: d.headers.map(([k, v]) => [k, resolvePlaceholders(v, creds)]),
    body,
  };
}

function excerpt(body: Buffer): string {
  const text = body.subarray(0, 200).toString('utf8').replace(/\s+/g, ' ');
  return body.length > 200 ? `${text}… (${body.length.toLocaleString('en')} bytes)` : text;
}

async function fuzz(
  service: RunningService,
  seed: number,
  budget: number,
  maxMs: number,
  only: string | undefined,
) {
  const trace = process.env.FUZZ_TRACE === '1';
  const client = new HttpClient('127.0.0.1', service.port);
  const docAnswer = await client.send({
    method: 'GET',
    path: '/docs/openapi.json',
    headers: [['Accept', 'application/json']],
  });
  if (docAnswer.response?.status !== 200)
    throw new Error(`GET /docs/openapi.json: ${docAnswer.response?.status ?? docAnswer.error}`);
  const doc = JSON.parse(docAnswer.response.body.toString('utf8')) as OpenApiDoc;
  const resolver = new SchemaResolver(doc);
  const allOps = listOperations(doc);
  const ops = filterOperations(allOps, only);
  if (ops.length === 0)
    throw new Error(`FUZZ_ONLY=${JSON.stringify(only)} matches no operation of the document`);
  const schemes = schemeCredentials(doc);

  const creds = new Credentials(client, seed);
  await creds.setup();
  await creds.refreshPools(allOps);
  const versionsAnswer = await client.json('GET', '/api/v1/versions');
  const versionList = (versionsAnswer.body as { data?: { version?: unknown }[] }).data;
  const versions = Array.isArray(versionList)
    ? versionList.map((v) => v.version).filter((v): v is string => typeof v === 'string')
    : [];

  console.log(
    `fuzz: ${ops.length} operations, budget ${budget} requests per operation and credential kind, seed ${seed}, bound ${maxMs} ms, driver ${service.driver}`,
  );
  const stats: OpStats[] = [];
  const failures: Failure[] = [];
  const wideSlowOps = new Set<string>();
  let requests = 0;
  let resetRetries = 0;
  let dead = false;

  for (const op of ops) {
    const kinds = credentialKinds(op, schemes.kinds);
    const row: OpStats = {
      id: op.id,
      method: op.method,
      path: op.path,
      kinds,
      sent: 0,
      byClass: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, err: 0 },
      failures: 0,
    };
    stats.push(row);
    for (const kind of kinds) {
      if (dead) break;
      const wideKeys = wideSlowOps.size >= WIDE_SLOW_LIMIT ? WIDE_KEYS_REDUCED : WIDE_KEYS;
      const ctx: RequestContext = {
        resolver,
        pools: new Set(creds.pools.keys()),
        op,
        kind,
        credentials: schemes.headers,
        versions,
        wideKeys,
        example: creds.examples.get(op.id),
      };
      const [drafts] = fc.sample(batchArb(ctx, budget), { seed: batchSeed(seed, op.id, kind), numRuns: 1 });
      let wrote = false;
      for (const [index, draft] of (drafts ?? []).entries()) {
        // The SCIM routes are limited per token and per client IP: keep both under the limit (see Credentials).
        if (isScimGuarded(op)) await creds.spendScim();
        const req = materialize(draft, op, creds);
        let result = await client.send(req);
        // The service answers an oversized body (413) and closes the connection with the rest of the body unread;
        // the kernel then resets it, and a client busy at that moment can lose the answer (curl, reading while it
        // sends, always sees the 413). A reset during a large upload is retried once and counted, not failed.
        if (
          !result.response &&
          /^(EPIPE|ECONNRESET)/.test(result.error ?? '') &&
          (req.body?.length ?? 0) > LARGE_BODY
        ) {
          resetRetries++;
          result = await client.send(req);
        }
        requests++;
        row.sent++;
        const status = result.response?.status;
        row.byClass[statusClass(status)]++;
        if (trace)
          console.log(
            `${op.id} [${kind}] #${index} ${draft.mutator}: ${draft.note} -> ${status ?? result.error} ${Math.round(result.ms)} ms ${result.response ? excerpt(result.response.body).slice(0, 160) : ''}`,
          );
        const verdicts = judge(
          op,
          { method: req.method, path: req.path, mustRefuse: draft.mustRefuse },
          result,
          { maxMs: boundOf(op, maxMs), resolver },
        );
        if (service.exit) {
          dead = true;
          verdicts.push({
            oracle: 'socket',
            message: `the service exited (code ${service.exit.code}, signal ${service.exit.signal}) after this request`,
          });
        }
        for (const v of verdicts) {
          failures.push({
            op: op.id,
            kind,
            index,
            mutator: draft.mutator,
            note: draft.note,
            oracle: v.oracle,
            message: v.message,
            status,
            request: req,
            responseExcerpt: result.response ? excerpt(result.response.body) : undefined,
          });
          row.failures++;
          if (v.oracle === 'slow' && draft.mutator === 'json-wide') wideSlowOps.add(op.id);
        }
        if (dead) break;
        // A successful write may have revoked one of the fuzzer's credentials (logout, a deleted agent, a narrowed
        // key…): check them now, so the rest of the batch still reaches the handler.
        if (
          status !== undefined &&
          status >= 200 &&
          status < 300 &&
          !['GET', 'HEAD', 'OPTIONS'].includes(req.method)
        ) {
          wrote = true;
          await creds.ensure();
        }
      }
      if (dead) break;
      const repaired = await creds.ensure();
      if (wrote || repaired.length > 0) await creds.refreshPools(allOps);
    }
    if (dead) break;
  }
  const reached = new Set(stats.map((r) => r.id));
  return {
    stats,
    failures,
    requests,
    dead,
    resetRetries,
    unreached: ops.filter((o) => !reached.has(o.id)).map((o) => o.id),
    wideReduced: wideSlowOps.size >= WIDE_SLOW_LIMIT,
    secrets: creds.secrets(),
    repairs: creds.repairs,
    base: `http://127.0.0.1:${service.port}`,
  };
}

/**
 * The time bound of an operation: FUZZ_MAX_MS, except for a document rendered by a browser (a PDF), which may
 * take seconds (docs/compliance-officers.md, "The compliance PDF"); those get FUZZ_PDF_MAX_MS (default 30 s).
 */
function boundOf(op: Operation, maxMs: number): number {
  const pdf = Object.values(op.responses).some((r) => r.content && 'application/pdf' in r.content);
  return pdf ? Math.max(maxMs, intEnv('FUZZ_PDF_MAX_MS', 30_000)) : maxMs;
}

async function main(): Promise<number> {
  const seed = intEnv('FUZZ_SEED', 42);
  const budget = intEnv('FUZZ_BUDGET', DEFAULT_BUDGET);
  const maxMs = intEnv('FUZZ_MAX_MS', 1000);
  const only = process.env.FUZZ_ONLY;
  const summaryPath = process.env.FUZZ_SUMMARY;
  const started = Date.now();

  const service = await startService();
  // Ctrl-C: stop the service and drop its database rather than leave them behind.
  process.once('SIGINT', () => {
    void service.stop().finally(() => process.exit(130));
  });
  let outcome: Awaited<ReturnType<typeof fuzz>>;
  try {
    outcome = await fuzz(service, seed, budget, maxMs, only);
  } catch (e) {
    console.error(`fuzz: aborted: ${(e as Error).stack ?? String(e)}`);
    console.error(`--- service output (tail) ---\n${service.tail()}`);
    await service.stop().catch(() => undefined);
    return 2;
  }
  const tail = service.tail();
  await service.stop();

  const { stats, failures, requests } = outcome;
  console.log('');
  for (const line of table(stats)) console.log(line);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const repairs = Object.entries(outcome.repairs).map(([k, n]) => `${k} ×${n}`);
  console.log('');
  console.log(`credentials recreated during the run: ${repairs.length ? repairs.join(', ') : 'none'}`);
  if (outcome.resetRetries > 0)
    console.log(`large uploads resent after a connection reset: ${outcome.resetRetries}`);
  if (outcome.wideReduced)
    console.log(
      `wide bodies: ${WIDE_KEYS.toLocaleString('en')} members until ${WIDE_SLOW_LIMIT} operations exceeded the bound with them, then ${WIDE_KEYS_REDUCED.toLocaleString('en')}`,
    );
  if (failures.length > 0) {
    console.log('');
    console.log(
      `FAILURES (${failures.length} failing requests; credentials in the curl lines are $JWT, $WORKSPACE_KEY, $AGENT_KEY, $SCIM_TOKEN; BASE defaults to http://127.0.0.1:3000):`,
    );
    for (const line of failureReport(failures, outcome.base, outcome.secrets)) console.log(line);
    console.log('');
    console.log(`replay: FUZZ_SEED=${seed} FUZZ_BUDGET=${budget} FUZZ_ONLY='<METHOD /path>' npm run fuzz`);
    console.log(`--- service output (tail) ---\n${tail}`);
  }
  // Operations never reached because the service died count as failing: nothing was verified about them.
  const failing = [...stats.filter((s) => s.failures > 0).map((s) => s.id), ...outcome.unreached];
  const clean = stats.length + outcome.unreached.length - failing.length;
  if (outcome.unreached.length > 0)
    console.log(`not fuzzed (the service died): ${outcome.unreached.join(', ')}`);
  console.log('');
  console.log(`fuzz: ${seconds} s`);
  console.log(summaryLine(clean, failing.length, requests, seed, service.driver));
  if (summaryPath) {
    writeFileSync(
      summaryPath,
      JSON.stringify(
        {
          driver: service.driver,
          seed,
          budget,
          maxMs,
          requests,
          seconds: Number(seconds),
          operations: stats.length + outcome.unreached.length,
          clean,
          failing: failing.length,
          failingOperations: failing,
          complete: !outcome.dead,
        },
        null,
        2,
      ),
    );
  }
  return failures.length > 0 || outcome.dead ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`fuzz: ${(e as Error & { tail?: string }).stack ?? String(e)}`);
    const tail = (e as { tail?: string }).tail;
    if (tail) console.error(`--- service output (tail) ---\n${tail}`);
    process.exit(2);
  },
);
