import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildService, type StartedService, startService } from './support/built-service.js';
import { type StartedWorker, startWorker, workerEntry } from './support/built-worker.js';
import { scratchDatabase } from './support/scratch-database.js';

const onPostgres = inject('databaseMode') === 'postgres';

/**
 * Each built entry point (API, worker, CLI) keeps String.prototype a fast object in V8 after ioredis, which it loads,
 * made it slow (libs/platform/src/system/fast-string-prototype.ts: every character loop in the process ran 4 to 8
 * times slower). Read in the process itself: node runs it with V8's natives syntax and a module loaded before the
 * entry that prints `%HasFastProperties(String.prototype)` on SIGUSR2 and as the process exits.
 */
let build: ReturnType<typeof buildService>;
let probeDir: string;
let nodeArgs: string[];
beforeAll(() => {
  build = buildService();
  probeDir = mkdtempSync(join(tmpdir(), 'gov-probe-'));
  const probe = join(probeDir, 'probe.mjs');
  writeFileSync(
    probe,
    [
      'const report = () => process.stdout.write(',
      "  JSON.stringify({ probe: 'string-prototype', fast: %HasFastProperties(String.prototype) }) + '\\n');",
      "process.on('SIGUSR2', report);",
      "process.on('exit', report);",
    ].join('\n'),
  );
  nodeArgs = ['--allow-natives-syntax', '--import', probe];
});
afterAll(() => {
  build?.remove();
  if (probeDir) rmSync(probeDir, { recursive: true, force: true });
});

/** The probe's line among a process's JSON lines, once its output has been read (it is written as it exits). */
async function probed(logs: Record<string, unknown>[]): Promise<unknown> {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline;) {
    const line = logs.find((l) => l.probe === 'string-prototype');
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return undefined;
}

async function databaseEnv(): Promise<Record<string, string>> {
  return onPostgres ? { DATABASE_URL: (await scratchDatabase()).url } : {};
}

// Each test starts a built process (startService waits up to 60 s for it), past the default 30 s on a loaded machine.
describe('String.prototype stays fast in the built processes', { timeout: 120_000 }, () => {
  it('in the API, after it has served requests', async () => {
    const service: StartedService = await startService(build.entry, {}, { nodeArgs });
    try {
      const res = await fetch(`${service.base}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@example.com', password: 'not-the-password-1' }),
      });
      expect(res.status).toBe(401);
      service.child.kill('SIGUSR2');
      expect(await probed(service.logs)).toEqual({ probe: 'string-prototype', fast: true });
    } finally {
      await service.stop();
    }
  });

  it('in the worker', async () => {
    const worker: StartedWorker = await startWorker(
      workerEntry(build.entry),
      { ...(await databaseEnv()), WORKERS: 'on' },
      { nodeArgs },
    );
    try {
      worker.child.kill('SIGUSR2');
      expect(await probed(worker.logs)).toEqual({ probe: 'string-prototype', fast: true });
    } finally {
      await worker.kill();
    }
  });

  it('in the CLI, and not without the call: the probe can tell', () => {
    const cli = build.entry.replace(/apps\/api\/src\/main\.js$/, 'apps/cli/src/main.js');
    const run = (args: string[]) => {
      const result = spawnSync(process.execPath, args, {
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: '' },
      });
      expect(result.status, result.stderr).toBe(0);
      return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as unknown;
    };
    expect(run([...nodeArgs, cli, '--help'])).toEqual({ probe: 'string-prototype', fast: true });
    // The same modules without the entry's call: ioredis has made it slow.
    const platform = build.entry.replace(/apps\/api\/src\/main\.js$/, 'libs/platform/src/index.js');
    expect(
      run([...nodeArgs, '--input-type=module', '-e', `await import(${JSON.stringify(platform)});`]),
    ).toEqual({
      probe: 'string-prototype',
      fast: false,
    });
  });
});
