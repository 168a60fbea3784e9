import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * HAProxy's binary (Debian's `haproxy` package, 2.6, the line of the compose file's image). A test that needs it
 * skips with a note when it is missing on a developer's machine, and fails in CI, where a skipped check would pass
 * unseen.
 */
export function haproxyBinary(skip: (note: string) => never): string {
  const probe = spawnSync('haproxy', ['-v'], { encoding: 'utf8' });
  if (!probe.error && probe.status === 0) return 'haproxy';
  const missing = "haproxy is not installed (Debian's haproxy package: apt-get install haproxy)";
  if (process.env.CI) throw new Error(`${missing}; CI needs it`);
  return skip(`${missing}; skipped outside CI`);
}

/**
 * A stand-in API replica: `/health/ready` answers 200 or 503 as `ready` says, `/close` reads the request and closes
 * the connection without an answer (a replica gone after receiving it), anything else answers its name and the
 * X-Forwarded-For it received. `hits` counts requests by `METHOD path`.
 */
export interface Replica {
  name: string;
  port: number;
  ready: boolean;
  hits: Map<string, number>;
  server: Server;
}

export async function startReplica(name: string): Promise<Replica> {
  const replica = { name, port: 0, ready: true, hits: new Map<string, number>() } as Replica;
  replica.server = createServer((req, res) => {
    const key = `${req.method} ${req.url}`;
    replica.hits.set(key, (replica.hits.get(key) ?? 0) + 1);
    if (req.url === '/health/ready') return void res.writeHead(replica.ready ? 200 : 503).end();
    if (req.url === '/close') return void req.resume().on('end', () => req.socket.destroy());
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ name, forwardedFor: req.headers['x-forwarded-for'] ?? null }));
  });
  replica.port = await listen(replica.server);
  return replica;
}

function listen(server: Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/** A port free a moment ago, for HAProxy's listener. */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The compose file's HAProxy configuration as it is, but listening on `port` of the loopback and sending to the
 * stand-ins by address instead of by their Docker names. Every other line is the file's.
 */
export function localConfig(config: string, port: number, replicas: Replica[]): string {
  let local = config.replace(/^ {2}bind :3000$/m, `  bind 127.0.0.1:${port}`);
  for (const r of replicas) {
    local = local.replace(
      new RegExp(`^ {2}server ${r.name} ${r.name}:3000$`, 'm'),
      `  server ${r.name} 127.0.0.1:${r.port}`,
    );
  }
  if (/^\s*(bind|server)\b.*:3000\b/m.test(local))
    throw new Error('a listener or a server of haproxy.cfg was not replaced');
  return local;
}

/** HAProxy in the foreground on a configuration; its log (stdout) is collected. */
export function startHaproxy(config: string): { process: ChildProcess; log: () => string; stop: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'governance-haproxy-'));
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  return {
    process: child,
    log: () => log,
    stop: () => {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One request on a connection of its own (no keep-alive: HAProxy treats a reused client connection differently). */
export function send(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(options.method === 'POST' ? '{}' : undefined);
  });
}

/** The replica that answered, or null for an answer of HAProxy's own. */
export async function answeredBy(port: number, headers?: Record<string, string>): Promise<string | null> {
  const { status, body } = await send(port, '/who', { headers });
  return status === 200 ? (JSON.parse(body) as { name: string }).name : null;
}

/** Polls `check` until it holds, or fails after `ms`. */
export async function eventually(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Stops a stand-in for good: its listener and every connection HAProxy kept open to it. */
export function stopReplica(replica: Replica): Promise<void> {
  replica.server.closeAllConnections();
  return new Promise((resolve) => replica.server.close(() => resolve()));
}
