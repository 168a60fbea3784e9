import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { prometheusBinary } from './binaries.js';
import {
  allowedSeries,
  cataloguedMetric,
  dashboardExpressions,
  dashboardPanels,
  METRIC_CATALOGUE,
  metricNames,
  observabilityFile,
  readDashboard,
  readRules,
} from './catalogue.js';

const RULES = observabilityFile('alert-rules.yml');
const OPERATORS_PAGE = fileURLToPath(new URL('../../docs/operators.md', import.meta.url));

/** GitHub's anchors of a page's headings (docs/operators.md's headings are plain text). */
function anchors(page: string): Set<string> {
  return new Set(
    [...readFileSync(page, 'utf8').matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) =>
      m[1]
        .replace(/[`*]/g, '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('metric names in PromQL', () => {
  it('finds the selected series and leaves out functions, labels, strings, ranges and keywords', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(governance_http_request_duration_seconds_bucket' +
          '{job=~"$job", code="up"}[$__rate_interval]))) > 0.1 and on (job) up offset 65m or vector(0)',
      ).sort(),
    ).toEqual(['governance_http_request_duration_seconds_bucket', 'up']);
    expect(
      metricNames('sum(increase(governance_job_runs_total[1h] offset 2d)) / ignoring(x) process_open_fds'),
    ).toEqual(['governance_job_runs_total', 'process_open_fds']);
  });

  it("accepts the catalogue's names, their histograms' series, the default metrics and up, and nothing else", () => {
    expect(cataloguedMetric('governance_job_duration_seconds_bucket')).toBe(
      'governance_job_duration_seconds',
    );
    expect(cataloguedMetric('governance_job_runs_total')).toBe('governance_job_runs_total');
    // A counter has no buckets, and a name outside the catalogue is refused even with the prefix.
    expect(cataloguedMetric('governance_job_runs_total_bucket')).toBeUndefined();
    expect(allowedSeries('governance_http_requests_total')).toBe(false);
    expect(allowedSeries('http_request_duration_seconds_count')).toBe(false);
    expect(allowedSeries('nodejs_heap_size_used_bytes')).toBe(true);
    expect(allowedSeries('up')).toBe(true);
  });
});

describe('the Grafana dashboard (deploy/observability/grafana-dashboard.json)', () => {
  const dashboard = readDashboard();
  const panels = dashboardPanels(dashboard);

  it('is a current classic dashboard whose every query goes through the datasource variable', () => {
    expect(dashboard.schemaVersion).toBe(42);
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    const datasource = dashboard.templating.list.find((v) => v.name === 'datasource');
    expect(datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const viaVariable = { type: 'prometheus', uid: '${datasource}' };
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query'))
      expect(variable.datasource, variable.name).toEqual(viaVariable);
    expect(panels.length).toBeGreaterThan(30);
    for (const panel of panels) {
      expect(panel.datasource, panel.title).toEqual(viaVariable);
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.datasource, panel.title).toEqual(viaVariable);
    }
  });

  it('lays its panels out on the 24-column grid without overlaps, each with its own id', () => {
    const all = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
    expect(new Set(all.map((p) => p.id)).size).toBe(all.length);
    const cells = new Set<string>();
    for (const { title, gridPos } of all) {
      expect(gridPos.x + gridPos.w, title).toBeLessThanOrEqual(24);
      for (let x = gridPos.x; x < gridPos.x + gridPos.w; x++)
        for (let y = gridPos.y; y < gridPos.y + gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${title} overlaps another panel at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
    }
  });

  it('reads only metrics of the catalogue, and shows every one of them', () => {
    const used = dashboardExpressions(dashboard).flatMap(metricNames);
    expect(used.filter((name) => !allowedSeries(name))).toEqual([]);
    const shown = new Set(used.map(cataloguedMetric));
    expect(Object.keys(METRIC_CATALOGUE).filter((name) => !shown.has(name as never))).toEqual([]);
  });
});

// promtool is a process of its own: well past the unit tests' 5 s on a loaded machine.
describe('the alert rules (deploy/observability/alert-rules.yml)', { timeout: 60_000 }, () => {
  it('pass promtool check rules', (ctx) => {
    const promtool = prometheusBinary('promtool', (note) => ctx.skip(note));
    const run = spawnSync(promtool, ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).toContain('SUCCESS');
    expect(run.status, run.stdout + run.stderr).toBe(0);
  });

  it('pass their unit tests (promtool test rules alert-rules.test.yml), firing and not firing', (ctx) => {
    const promtool = prometheusBinary('promtool', (note) => ctx.skip(note));
    const run = spawnSync(promtool, ['test', 'rules', 'alert-rules.test.yml'], {
      cwd: dirname(RULES),
      encoding: 'utf8',
    });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    // The tests cover the delivery lag and the backlog at least, each firing and not firing.
    const tests = readFileSync(observabilityFile('alert-rules.test.yml'), 'utf8');
    for (const alert of ['GovernanceWebhookDeliveryLag', 'GovernanceOutboxBacklogStale']) {
      const cases = [...tests.matchAll(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:(.*)`, 'g'))];
      expect(cases.some((c) => c[1].trim() === '[]')).toBe(true);
      expect(cases.some((c) => c[1].trim() === '')).toBe(true);
    }
  });

  it('read only metrics of the catalogue', () => {
    const { exprs } = readRules();
    expect(exprs.length).toBeGreaterThanOrEqual(9);
    expect(exprs.flatMap(metricNames).filter((name) => !allowedSeries(name))).toEqual([]);
  });

  it('each link to a runbook of its own under a heading of docs/operators.md', () => {
    const { alerts, runbooks } = readRules();
    expect(runbooks).toHaveLength(alerts.length);
    expect(new Set(runbooks).size).toBe(alerts.length);
    const headings = anchors(OPERATORS_PAGE);
    for (const [i, url] of runbooks.entries()) {
      expect(url, alerts[i]).toBe(`docs/operators.md#${alerts[i].toLowerCase()}`);
      expect(headings.has(alerts[i].toLowerCase()), `docs/operators.md has no heading ${alerts[i]}`).toBe(
        true,
      );
    }
  });
});
