import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { freePort } from './free-port.js';

const ROOT = join(import.meta.dirname, '../..');

/**
 * The service compiled as `npm run build` compiles it, into a folder of its own (the checkout's dist/ may be absent
 * or stale): swc over apps/ and libs/, the migrations beside them, a package.json with the libraries' `imports`, and
 * the checkout's node_modules. Its entry is started with node, as the image starts `dist/apps/api/src/main.js`.
 */
export function buildService(): { entry: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'gov-built-'));
  const swc = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/@swc/cli/bin/swc.js'),
      'apps',
      'libs',
      '-d',
      join(dir, 'dist'),
      '--config-file',
      '.swcrc',
      '--quiet',
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (swc.status !== 0) throw new Error(`swc failed: ${swc.stderr}`);
  cpSync(join(ROOT, 'drizzle'), join(dir, 'dist/drizzle'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', imports: pkg.imports }));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return {
    entry: join(dir, 'dist/apps/api/src/main.js'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * An empty database for one started service: on PostgreSQL a new database named with the run's prefix (the run's
 * teardown drops it), migrated by the service as it starts; on PGlite a data directory of its own.
 */
async function databaseEnv(dataDir: string): Promise<Record<string, string>> {
  if (inject('databaseMode') !== 'postgres') return { DATA_DIR: dataDir };
  const url = new URL(inject('pgTemplateUrl'));
  const name = `${inject('pgRunPrefix')}_svc_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({
    connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).href,
  });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${name}`;
  return { DATA_DIR: dataDir, DATABASE_URL: url.href };
}

export interface StartedService {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** The JSON lines it wrote on stdout so far. */
  logs: Record<string, unknown>[];
  child: ChildProcess;
  /** SIGTERM, then the exit (code or signal). */
  stop: () => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the built service on a free port with `env` added to a clean environment (this process's OTEL_* variables
 * and database settings are not passed on), and waits for GET /health. `nodeArgs` go to node before the entry.
 */
export async function startService(
  entry: string,
  env: Record<string, string>,
  options: { nodeArgs?: string[] } = {},
): Promise<StartedService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gov-svc-data-'));
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(OTEL_|DATABASE_URL$|DATA_DIR$|PORT$|VITEST)/.test(key)),
  );
  const port = await freePort();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), entry], {
    env: {
      ...inherited,
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      // One process, no load balancer to drain it from: SIGTERM closes at once.
      SHUTDOWN_DRAIN_MS: '0',
      ...(await databaseEnv(dataDir)),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { logs, stderr } = collectOutput(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const exit = await exited;
    rmSync(dataDir, { recursive: true, force: true });
    return exit;
  };
  for (const deadline = Date.now() + 60_000; ;) {
    if (child.exitCode !== null)
      throw new Error(`the service exited during start-up: ${stderr().slice(-2000)}`);
    if (
      await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the service did not become healthy: ${stderr().slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { base, logs, child, stop };
}

/** A call to the started service's API; the body parsed when it is JSON. */
export async function callService(
  base: string,
  method: string,
  path: string,
  options: { token?: string; key?: string; body?: unknown; requestId?: string } = {},
): Promise<{
  status: number;
  json: { data?: Record<string, unknown> } | undefined;
  requestId: string | null;
}> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: {
      ...(options.body ? { 'content-type': 'application/json' } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.key ? { 'x-api-key': options.key } : {}),
      ...(options.requestId ? { 'x-request-id': options.requestId } : {}),
    },
    body: options.body ? JSON.stringify(options.body) : undefined,
  });
  const text = await res.text();
  return {
    status: res.status,
    json: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
    requestId: res.headers.get('x-request-id'),
  };
}

/** What a started process writes: the JSON lines of its stdout, parsed as they come, and its stderr so far. */
export function collectOutput(child: ChildProcess): {
  logs: Record<string, unknown>[];
  stderr: () => string;
} {
  const logs: Record<string, unknown>[] = [];
  let pending = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop()!;
    for (const line of lines)
      if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return { logs, stderr: () => stderr };
}
