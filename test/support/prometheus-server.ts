import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** One series of an instant query's answer. */
export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}

/**
 * A real Prometheus on a free loopback port, with a temporary configuration and data directory (both removed by
 * `stop`). `files` are written beside the configuration (a token file, rule files), so the configuration can name
 * them relatively.
 */
export class PrometheusServer {
  private log = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly url: string,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
  }

  static async start(
    binary: string,
    config: string,
    files: Record<string, string> = {},
  ): Promise<PrometheusServer> {
    const dir = mkdtempSync(join(tmpdir(), 'gov-prometheus-'));
    writeFileSync(join(dir, 'prometheus.yml'), config);
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    const port = await freePort();
    const child = spawn(
      binary,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const server = new PrometheusServer(child, dir, `http://127.0.0.1:${port}`);
    try {
      await server.until('Prometheus to be ready', async () => (await fetch(`${server.url}/-/ready`)).ok);
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  /** An instant query's series; throws on an error answer (a query that does not parse or evaluate). */
  async query(expr: string): Promise<PromSample[]> {
    const res = await fetch(`${this.url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    const body = (await res.json()) as { status: string; error?: string; data: { result: PromSample[] } };
    if (body.status !== 'success') throw new Error(`Prometheus refused ${expr}: ${body.error}`);
    return body.data.result;
  }

  /** GET an API path of Prometheus (`/api/v1/rules`, `/api/v1/targets`) and answer its `data`. */
  async api<T>(path: string): Promise<T> {
    const body = (await (await fetch(`${this.url}${path}`)).json()) as { status: string; data: T };
    if (body.status !== 'success') throw new Error(`Prometheus answered ${JSON.stringify(body)} to ${path}`);
    return body.data;
  }

  /** Polls until `check` answers true (errors count as not yet), or fails after `ms` with Prometheus's log. */
  async until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    let last: unknown;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) break;
      try {
        if (await check()) return;
      } catch (err) {
        last = err;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(
      `Gave up waiting for ${what}${last ? ` (${String(last)})` : ''}; Prometheus's log:\n${this.log.slice(-3000)}`,
    );
  }

  /** Stops Prometheus (SIGTERM, then SIGKILL after 5 s) and removes its directory. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
