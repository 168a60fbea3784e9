import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, type TestContext as VitestContext } from 'vitest';
import { prometheusBinary } from '../tools/observability/binaries.js';
import {
  dashboardExpressions,
  familyOf,
  metricNames,
  observabilityFile,
  POSSIBLY_ABSENT,
  readDashboard,
  readRules,
} from '../tools/observability/catalogue.js';
import { JobScheduler, MetricsListener } from '#platform';
import { TestContext } from './support/app.js';
import { Exposition } from './support/metrics-scrape.js';
import { PrometheusServer } from './support/prometheus-server.js';
import { traceBody } from './support/traces-suite.js';

// deploy/observability (docs/operators.md, "Alerts and dashboards") against the running service: the metrics the
// rules and the dashboard read are exported, and a real Prometheus, configured by the example prometheus.yml,
// scrapes the service with its token, loads the rules and answers the dashboard's queries.

const TOKEN = 'observability-e2e-metrics-token-0123456789';

/**
 * deploy/observability/prometheus.yml, scraping every second, pointed at this test's service: its main port as the
 * API replica, and its METRICS_PORT listener as the worker (a worker serves the same listener).
 */
function exampleConfig(api: string, worker: string): string {
  const replacements: [string, string][] = [
    ['scrape_interval: 15s', 'scrape_interval: 1s'],
    ['evaluation_interval: 15s', 'evaluation_interval: 1s'],
    ['credentials_file: /etc/prometheus/governance-metrics-token', 'credentials_file: metrics-token'],
    ["['api-1:3000', 'api-2:3000']", `['${api}']`],
    ["['worker-1:9464']", `['${worker}']`],
  ];
  let config = readFileSync(observabilityFile('prometheus.yml'), 'utf8');
  for (const [from, to] of replacements) {
    if (!config.includes(from))
      throw new Error(`prometheus.yml no longer contains ${from}: update this test`);
    config = config.replaceAll(from, to);
  }
  return config;
}

/** Some of everything a client does (sign-up and sign-in, an agent, traces, one replayed, refusals), and a job. */
async function traffic(ctx: TestContext): Promise<void> {
  const owner = await ctx.register({ organizationName: 'Observed' });
  await ctx.login(owner.user.email);
  await ctx.login(owner.user.email, 'not the password').catch(() => undefined);
  const agent = await ctx.newAgent(owner.organization.id, 'Observed agent');
  for (let i = 0; i < 3; i++) {
    const res = await ctx.post('/api/v1/traces', { apiKey: agent.key, body: traceBody() });
    expect(res.statusCode, res.body).toBe(201);
  }
  const replayed = { apiKey: agent.key, body: traceBody(), headers: { 'idempotency-key': 'observed-1' } };
  expect((await ctx.post('/api/v1/traces', replayed)).statusCode).toBe(201);
  await ctx.post('/api/v1/traces', replayed);
  expect((await ctx.get('/api/v1/no-such-route')).statusCode).toBe(404);
  expect((await ctx.post('/api/v1/auth/register', { body: {} })).statusCode).toBe(400);
  // One run of a job (the scheduler's timers do not fire within a test).
  await ctx.service(JobScheduler).runNow('outbox');
}

describe('the metrics that deploy/observability reads', () => {
  let ctx: TestContext;
  let target: string;
  let listener: string;
  let prometheus: Promise<PrometheusServer> | undefined;

  /** Prometheus on the example configuration, started once for the tests that need it. */
  function running(t: VitestContext): Promise<PrometheusServer> {
    const binary = prometheusBinary('prometheus', (note) => t.skip(note));
    prometheus ??= (async () => {
      const server = await PrometheusServer.start(binary, exampleConfig(target, listener), {
        'metrics-token': TOKEN,
        'alert-rules.yml': readFileSync(observabilityFile('alert-rules.yml'), 'utf8'),
      });
      type Targets = { activeTargets: { scrapePool: string; health: string; lastError: string }[] };
      let targets: Targets['activeTargets'] = [];
      try {
        await server.until('both targets to be up', async () => {
          ({ activeTargets: targets } = await server.api<Targets>('/api/v1/targets'));
          return targets.length === 2 && targets.every((t) => t.health === 'up');
        });
      } catch (err) {
        await server.stop();
        const why = targets.map((t) => `${t.scrapePool}: ${t.health} ${t.lastError}`).join('; ');
        throw new Error(`${(err as Error).message.split(';')[0]}: ${why}`, { cause: err });
      }
      return server;
    })();
    return prometheus;
  }

  beforeAll(async () => {
    ctx = await TestContext.create({ config: { metrics: { enabled: true, port: 0, host: '127.0.0.1', token: TOKEN } } });
    await ctx.app.listen(0, '127.0.0.1');
    target = `127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
    listener = `127.0.0.1:${ctx.service(MetricsListener).port}`;
    await traffic(ctx);
  });
  afterAll(async () => {
    await (await prometheus?.catch(() => undefined))?.stop();
    await ctx?.close();
  });

  it('are all exported by the service after some traffic, but for those absent until an event', async () => {
    const res = await ctx.get('/metrics', { token: TOKEN });
    expect(res.statusCode, res.body).toBe(200);
    const exported = new Exposition(res.body);
    const read = [...readRules().exprs, ...dashboardExpressions(readDashboard())]
      .flatMap(metricNames)
      .filter((name) => name !== 'up')
      .map(familyOf);
    expect(read.length).toBeGreaterThan(40);
    const missing = [...new Set(read)].filter(
      (name) => !exported.has(name) && !POSSIBLY_ABSENT.includes(name),
    );
    expect(missing.sort()).toEqual([]);
  });

  it('are scraped by Prometheus as the example configures it: the main port and METRICS_PORT with the token', async (t) => {
    const server = await running(t);
    const byJob = (samples: { metric: Record<string, string> }[]) =>
      samples.map((s) => s.metric).sort((a, b) => a.job.localeCompare(b.job));
    const up = await server.query('up');
    expect(byJob(up)).toEqual([
      { __name__: 'up', job: 'governance-api', instance: target },
      { __name__: 'up', job: 'governance-worker', instance: listener },
    ]);
    expect(up.map((s) => s.value[1])).toEqual(['1', '1']);
    const inFlight = await server.query('governance_http_requests_in_flight');
    expect(byJob(inFlight)).toEqual([
      { __name__: 'governance_http_requests_in_flight', job: 'governance-api', instance: target },
      { __name__: 'governance_http_requests_in_flight', job: 'governance-worker', instance: listener },
    ]);
    for (const { value } of inFlight) expect(Number(value[1])).toBeGreaterThanOrEqual(0);
    // Requests are counted by route template, and the traffic above is in them.
    const registered = await server.query(
      'governance_http_request_duration_seconds_count{job="governance-api", route="/api/v1/auth/register", status_class="2xx"}',
    );
    expect(registered.map((s) => Number(s.value[1]))).toEqual([expect.any(Number)]);
    expect(Number(registered[0].value[1])).toBeGreaterThanOrEqual(1);
    // The scheduler's job is `job_name` beside the scrape job (what the job alerts group by), never renamed.
    const runs = await server.query('governance_job_runs_total{job="governance-api"}');
    expect(runs.length).toBeGreaterThan(0);
    for (const { metric } of runs) {
      expect(metric.job_name).toMatch(/^[a-z-]+$/);
      expect(metric.exported_job).toBeUndefined();
    }
  }, 60_000);

  it('feed every alert rule, which Prometheus loads and evaluates without error', async (t) => {
    const server = await running(t);
    type Rule = { name: string; health: string; lastError?: string; lastEvaluation: string };
    let groups: { name: string; rules: Rule[] }[] = [];
    await server.until('every rule to be evaluated', async () => {
      ({ groups } = await server.api<{ groups: typeof groups }>('/api/v1/rules'));
      const rules = groups.flatMap((g) => g.rules);
      return rules.length > 0 && rules.every((r) => !r.lastEvaluation.startsWith('0001-'));
    });
    // Prometheus lists the groups by name.
    expect(groups.flatMap((g) => g.rules.map((r) => r.name)).sort()).toEqual(readRules().alerts.sort());
    for (const rule of groups.flatMap((g) => g.rules))
      expect({ name: rule.name, health: rule.health, lastError: rule.lastError || undefined }).toEqual({
        name: rule.name,
        health: 'ok',
        lastError: undefined,
      });
  }, 60_000);

  it("feed the dashboard, whose every query Prometheus answers with Grafana's variables in place", async (t) => {
    const server = await running(t);
    const variables: Record<string, string> = {
      $__rate_interval: '1m',
      $__range: '1h',
      $job: '.*',
      $instance: '.*',
    };
    const failures: string[] = [];
    for (const expr of dashboardExpressions(readDashboard())) {
      const query = expr.replace(/\$\w+/g, (name) => variables[name] ?? name);
      await server.query(query).catch((err: Error) => failures.push(err.message));
    }
    expect(failures).toEqual([]);
    // The variables' own query lists this service's scrape job.
    expect((await server.query('governance_db_pool_connections')).map((s) => s.metric.job)).toContain(
      'governance-api',
    );
  }, 60_000);
});
