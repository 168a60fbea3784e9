import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The service's metrics by name and kind: the catalogue that the alert rules and the dashboard of
 * deploy/observability are written against (docs/operators.md, "Alerts and dashboards"). A name here is a promise to
 * operators; renaming one breaks their dashboards and alerts.
 */
export const METRIC_CATALOGUE = {
  governance_http_request_duration_seconds: 'histogram',
  governance_http_requests_in_flight: 'gauge',
  governance_http_refusals_total: 'counter',
  governance_traces_ingested_total: 'counter',
  governance_trace_idempotent_replays_total: 'counter',
  governance_trace_writer_batch_size: 'histogram',
  governance_trace_writer_batch_commit_seconds: 'histogram',
  governance_policy_evaluation_seconds: 'histogram',
  governance_otlp_spans_total: 'counter',
  governance_outbox_backlog: 'gauge',
  governance_outbox_oldest_due_age_seconds: 'gauge',
  governance_outbox_attempts_total: 'counter',
  governance_webhook_delivery_lag_seconds: 'histogram',
  governance_webhooks_disabled_total: 'counter',
  governance_stream_connections: 'gauge',
  governance_stream_events_sent_total: 'counter',
  governance_stream_slow_clients_disconnected_total: 'counter',
  governance_job_runs_total: 'counter',
  governance_job_duration_seconds: 'histogram',
  governance_job_claims_lost_total: 'counter',
  governance_audit_entries_appended_total: 'counter',
  governance_audit_verification_runs_total: 'counter',
  governance_audit_verification_entries_per_second: 'gauge',
  governance_audit_checkpoint_age_seconds: 'gauge',
  governance_db_pool_connections: 'gauge',
  governance_db_query_errors_total: 'counter',
  governance_redis_up: 'gauge',
  governance_event_loop_delay_seconds: 'histogram',
  governance_logins_total: 'counter',
  governance_mfa_failures_total: 'counter',
  governance_scim_requests_total: 'counter',
  governance_ssrf_refusals_total: 'counter',
} as const;

export type CataloguedMetric = keyof typeof METRIC_CATALOGUE;

/** Absent from an exposition in a normal state: no checkpoint signed yet; no Redis configured. */
export const POSSIBLY_ABSENT: readonly string[] = [
  'governance_audit_checkpoint_age_seconds',
  'governance_redis_up',
];

/** prom-client's default metrics (collectDefaultMetrics), which the dashboard's runtime panels read. */
const DEFAULT_METRIC_PREFIXES = ['process_', 'nodejs_'];

/** Series Prometheus writes itself for every target. */
const SCRAPE_SERIES = new Set(['up']);

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'offset',
  'bool',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects. Grafana's variables are allowed (`$__rate_interval`, `$job` inside
 * a matcher); strings, label matchers, ranges and grouping labels are dropped, and so is every identifier followed by
 * an opening parenthesis (a function or an aggregation).
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w.$])[A-Za-z_:][\w:]*/g)) {
    const rest = bare.slice(m.index + m[0].length);
    if (/^\s*\(/.test(rest) || KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** The catalogued metric a series name belongs to (a histogram's `_bucket`, `_sum` and `_count` included). */
export function cataloguedMetric(series: string): CataloguedMetric | undefined {
  if (series in METRIC_CATALOGUE) return series as CataloguedMetric;
  const histogram = /^(.*)_(?:bucket|sum|count)$/.exec(series)?.[1];
  if (histogram && METRIC_CATALOGUE[histogram as CataloguedMetric] === 'histogram')
    return histogram as CataloguedMetric;
  return undefined;
}

/** Whether an expression may select this series: a catalogued metric, a default metric, or `up`. */
export function allowedSeries(series: string): boolean {
  return (
    cataloguedMetric(series) !== undefined ||
    DEFAULT_METRIC_PREFIXES.some((prefix) => series.startsWith(prefix)) ||
    SCRAPE_SERIES.has(series)
  );
}

/** The metric family of a series in an exposition: the histogram's own name for its `_bucket`/`_sum`/`_count`. */
export function familyOf(series: string): string {
  return cataloguedMetric(series) ?? series.replace(/_(?:bucket|sum|count)$/, '');
}

/** A file of deploy/observability. */
export function observabilityFile(name: string): string {
  return fileURLToPath(new URL(`../../deploy/observability/${name}`, import.meta.url));
}

/** The alerts of alert-rules.yml with their expressions and runbook links, read from its layout (`expr:` inline or as
 * a `|` block), in the file's order. */
export function readRules(): { alerts: string[]; exprs: string[]; runbooks: string[] } {
  const lines = readFileSync(observabilityFile('alert-rules.yml'), 'utf8').split('\n');
  const alerts: string[] = [];
  const exprs: string[] = [];
  const runbooks: string[] = [];
  lines.forEach((line, i) => {
    const alert = /^\s*- alert:\s*(\S+)/.exec(line);
    if (alert) alerts.push(alert[1]);
    const runbook = /^\s*runbook_url:\s*(\S+)/.exec(line);
    if (runbook) runbooks.push(runbook[1]);
    const expr = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!expr) return;
    if (expr[2] !== '|') return void exprs.push(expr[2]);
    const block: string[] = [];
    for (const next of lines.slice(i + 1)) {
      if (next.trim() !== '' && next.search(/\S/) <= expr[1].length) break;
      block.push(next);
    }
    exprs.push(block.join('\n'));
  });
  return { alerts, exprs, runbooks };
}

export interface DashboardPanel {
  id?: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: { expr: string; refId: string; datasource?: { type: string; uid: string } }[];
  panels?: DashboardPanel[];
}

export interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: DashboardPanel[];
  templating: {
    list: { name: string; type: string; query: unknown; datasource?: { type: string; uid: string } }[];
  };
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(observabilityFile('grafana-dashboard.json'), 'utf8')) as Dashboard;
}

/** Every panel of the dashboard, rows' collapsed panels included, rows themselves excluded. */
export function dashboardPanels(dashboard: Dashboard): DashboardPanel[] {
  return dashboard.panels.flatMap((panel) => (panel.type === 'row' ? (panel.panels ?? []) : [panel]));
}

/** Every PromQL expression of the dashboard: its panels' queries and its variables' queries. */
export function dashboardExpressions(dashboard: Dashboard): string[] {
  const variables = dashboard.templating.list
    .filter((v) => v.type === 'query')
    .map((v) => (typeof v.query === 'string' ? v.query : (v.query as { query: string }).query))
    .map((q) => /^label_values\((.*),\s*\w+\)$/.exec(q)?.[1] ?? q);
  return [...dashboardPanels(dashboard).flatMap((p) => (p.targets ?? []).map((t) => t.expr)), ...variables];
}
