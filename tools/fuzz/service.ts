// The service under test: the built API on a free port of 127.0.0.1, on PGlite in a fresh temporary DATA_DIR or,
// when DATABASE_URL is set, on a fresh PostgreSQL database created for the run and dropped afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });

/** The last `max` bytes written by the service (stdout and stderr interleaved). */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max = 64 * 1024) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.max && this.chunks.length > 1) this.size -= this.chunks.shift()!.length;
  }
  text(lines = 25): string {
    return Buffer.concat(this.chunks).toString('utf8').split('\n').slice(-lines).join('\n');
  }
}

export interface RunningService {
  port: number;
  driver: 'postgres' | 'pglite';
  /** Set once the process has exited (the fuzzer reports it as a failure). */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  tail(lines?: number): string;
  stop(): Promise<void>;
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Creates `fuzz_<pid>_<time>` on the server of `url`; returns its URL and how to drop it. */
async function createDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `fuzz_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
  } finally {
    await admin.end();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

async function waitForHealth(
  port: number,
  service: RunningService,
  deadline = Date.now() + 90_000,
): Promise<void> {
  while (Date.now() < deadline) {
    if (service.exit)
      throw new Error(
        `the service exited during start-up (code ${service.exit.code}, signal ${service.exit.signal})`,
      );
    try {
      const r = await fetch(`http://127.0.0.1:${port}/health`);
      if (r.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error('the service did not become healthy within 90 s');
}

export async function startService(entry = 'dist/apps/api/src/main.js'): Promise<RunningService> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'gov-fuzz-'));
  const db = process.env.DATABASE_URL ? await createDatabase(process.env.DATABASE_URL) : undefined;
  const smtp = await smtpSink();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    // One process, no load balancer to drain it from: SIGTERM closes at once.
    SHUTDOWN_DRAIN_MS: '0',
    NODE_ENV: 'production',
    JWT_SECRET: 'route-fuzzer-secret-'.padEnd(48, 'f'),
    AUDIT_SIGNING_KEY: generateKeyPairSync('ed25519')
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString(),
    AUTH_RATE_LIMIT_MAX: '1000000000',
    CPI_RATE_LIMIT_MAX: '1000000000',
    // Mail the service sends now (a scheduled report's send-now) goes to a sink that accepts everything: a refused
    // send is a documented 502, which the fuzzer would count as a 5xx of the service.
    SMTP_URL: smtp.url,
    // New organizations get every feature (SCIM, SSO, the governance features), so that feature-gated routes reach
    // their handlers instead of answering 403 upgrade-required. FUZZ_PLAN overrides (e.g. sandbox).
    DEFAULT_PLAN: process.env.FUZZ_PLAN ?? 'enterprise',
  };
  if (db) env.DATABASE_URL = db.url;
  else delete env.DATABASE_URL;
  const tail = new Tail();
  const child: ChildProcess = spawn(process.execPath, [entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c: Buffer) => tail.push(c));
  child.stderr!.on('data', (c: Buffer) => tail.push(c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const service: RunningService = {
    port,
    driver: db ? 'postgres' : 'pglite',
    exit: undefined,
    tail: (lines) => tail.text(lines),
    stop: async () => {
      if (!service.exit) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(killer);
      }
      rmSync(dataDir, { recursive: true, force: true });
      await smtp.close();
      if (db) await db.drop();
    },
  };
  child.once('exit', (code, signal) => {
    service.exit = { code, signal };
  });
  try {
    await waitForHealth(port, service);
  } catch (e) {
    await service.stop().catch(() => undefined);
    throw Object.assign(e as Error, { tail: tail.text() });
  }
  return service;
}

/** An SMTP server on a free local port that accepts and discards every message. */
async function smtpSink(): Promise<{ url: string; close: () => Promise<void> }> {
  const { SMTPServer } = await import('smtp-server');
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => callback());
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return {
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
