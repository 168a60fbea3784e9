import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectOutput } from './built-service.js';

export interface StartedWorker {
  child: ChildProcess;
  /** The JSON lines it wrote on stdout so far. */
  logs: Record<string, unknown>[];
  /** Resolves with the exit (code or signal) and the time it happened (`performance.now()`). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** Kills it (SIGKILL) if it still runs, waits for the exit and removes its data directory. */
  kill: () => Promise<void>;
}

/** The worker's entry beside the API's in a build from `buildService()` (test/support/built-service.ts). */
export function workerEntry(apiEntry: string): string {
  return apiEntry.replace(/apps\/api\/src\/main\.js$/, 'apps/worker/src/main.js');
}

/**
 * Starts the built worker (`node dist/apps/worker/src/main.js`, as `npm run start:worker` does) with `env` added to a
 * clean environment (this process's OTEL_* variables and database settings are not passed on), and waits for its
 * start-up line: from then on its shutdown hooks and its SIGTERM exit timer are installed. `nodeArgs` go to node
 * before the entry.
 */
export async function startWorker(
  entry: string,
  env: Record<string, string>,
  options: { nodeArgs?: string[] } = {},
): Promise<StartedWorker> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gov-worker-data-'));
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(OTEL_|DATABASE_URL$|DATA_DIR$|PORT$|VITEST)/.test(key)),
  );
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), entry], {
    env: { ...inherited, NODE_ENV: 'development', LOG_LEVEL: 'info', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { logs, stderr } = collectOutput(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  };
  for (const deadline = Date.now() + 30_000; ;) {
    if (logs.some((line) => line.msg === 'Governance worker started')) break;
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await kill();
      throw new Error(`the worker did not start: ${stderr().slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { child, logs, exited, kill };
}
