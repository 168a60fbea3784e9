import { escapeHtml as e, type RenderedMail } from '#platform';
import { utc } from './compliance-report.html.js';
import { formatMetric, METRIC_LABELS } from '../alerts/alert-metrics.js';
import type { DigestData, DigestTransition } from './report-figures.js';

const percent = (rate: number): string => `${(rate * 100).toFixed(1)} %`;
const int = (n: number): string => n.toLocaleString('en-GB');
const confidence = (c: number | null): string => (c === null ? '–' : c.toFixed(3));

/** "triggered: block rate 42.0 % > 20.0 %", "resolved: trace volume 3 < 10". */
function transitionWords(t: DigestTransition): string {
  const measured = `${METRIC_LABELS[t.metric]} ${formatMetric(t.metric, t.value)}`;
  const threshold = formatMetric(t.metric, t.threshold);
  return t.to === 'firing'
    ? `triggered: ${measured} ${t.comparison === 'gt' ? '>' : '<'} ${threshold}`
    : `resolved: ${measured}, threshold ${threshold}`;
}

const TABLE = 'border-collapse:collapse;margin:4px 0 16px';
const CELL = 'padding:4px 10px;border-bottom:1px solid #ddd;text-align:left';
const NUM = 'padding:4px 10px;border-bottom:1px solid #ddd;text-align:right';

function htmlTable(head: string[], rows: string[][], numeric: boolean[]): string {
  const th = head
    .map((h, i) => `<th style="${numeric[i] ? NUM : CELL};background:#eef2f8">${h}</th>`)
    .join('');
  const body = rows
    .map((r) => `<tr>${r.map((c, i) => `<td style="${numeric[i] ? NUM : CELL}">${c}</td>`).join('')}</tr>`)
    .join('');
  return `<table style="${TABLE}"><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}

/**
 * The digest of a scheduled report: one section per include flag, in HTML and plain text. Every
 * value from the organization (names, titles) is escaped in the HTML part.
 * See docs/compliance-officers.md, "Scheduled reports"; test/scheduled-reports-digest.e2e-spec.ts.
 */
export function digestMail(reportName: string, d: DigestData, appUrl: string): RenderedMail {
  const period = `${utc(d.period.from)} to ${utc(d.period.to)}`;
  const subject = `${reportName}: ${d.organization.name} governance digest`;
  const text: string[] = [`${reportName}`, `${d.organization.name}, ${period}`, ''];
  const html: string[] = [
    `<h1 style="font-size:20px;color:#0d2b5c;margin:0 0 4px">${e(reportName)}</h1>`,
    `<p style="margin:0 0 16px;color:#444">${e(d.organization.name)}, ${period}</p>`,
  ];

  if (d.metrics) {
    const m = d.metrics;
    text.push('METRICS', `Traces: ${int(m.total)}`);
    for (const s of m.byStatus) {
      text.push(`  ${s.status}: ${int(s.traces)}, average confidence ${confidence(s.averageConfidence)}`);
    }
    text.push(`Review backlog: ${int(m.review.pending)} pending, ${int(m.review.escalated)} escalated`, '');
    html.push(
      `<h2 style="font-size:16px;color:#0d2b5c">Metrics</h2><p>${int(m.total)} traces.</p>`,
      htmlTable(
        ['Status', 'Traces', 'Average confidence'],
        m.byStatus.map((s) => [s.status, int(s.traces), confidence(s.averageConfidence)]),
        [false, true, true],
      ),
      `<p>Review backlog: ${int(m.review.pending)} pending, ${int(m.review.escalated)} escalated.</p>`,
    );
  }

  if (d.topAgents) {
    text.push('TOP AGENTS');
    if (d.topAgents.length === 0) text.push('  No trace in the period.');
    for (const a of d.topAgents) {
      text.push(
        `  ${a.name}: ${int(a.traces)} traces, flag rate ${percent(a.flagRate)}, block rate ${percent(a.blockRate)}`,
      );
    }
    text.push('');
    html.push(
      `<h2 style="font-size:16px;color:#0d2b5c">Top agents</h2>`,
      d.topAgents.length === 0
        ? '<p>No trace in the period.</p>'
        : htmlTable(
            ['Agent', 'Traces', 'Flag rate', 'Block rate'],
            d.topAgents.map((a) => [e(a.name), int(a.traces), percent(a.flagRate), percent(a.blockRate)]),
            [false, true, true, true],
          ),
    );
  }

  if (d.alerts) {
    const a = d.alerts;
    const chain = a.chainValid ? 'valid' : 'BROKEN';
    text.push(
      'ALERTS',
      `  Blocked traces: ${int(a.blockedTraces)}`,
      `  Open incidents: ${int(a.openIncidents)}, overdue: ${int(a.overdueIncidents)}`,
      `  Audit chain: ${chain}`,
      `  Alert transitions: ${int(a.transitions.total)}`,
    );
    for (const t of a.transitions.rows) {
      text.push(`    ${utc(t.at)} ${t.alertName}: ${transitionWords(t)}`);
    }
    if (a.transitions.total > a.transitions.rows.length) {
      text.push(`    … and ${int(a.transitions.total - a.transitions.rows.length)} more`);
    }
    text.push('');
    html.push(
      `<h2 style="font-size:16px;color:#0d2b5c">Alerts</h2><ul>`,
      `<li>Blocked traces: ${int(a.blockedTraces)}</li>`,
      `<li>Open incidents: ${int(a.openIncidents)}, overdue: ${a.overdueIncidents > 0 ? `<strong style="color:#c62828">${int(a.overdueIncidents)}</strong>` : '0'}</li>`,
      `<li>Audit chain: ${a.chainValid ? '<span style="color:#2e7d32">valid</span>' : '<strong style="color:#c62828">BROKEN</strong>'}</li>`,
      `<li>Alert transitions: ${int(a.transitions.total)}</li></ul>`,
    );
    if (a.transitions.rows.length > 0) {
      html.push(
        htmlTable(
          ['Time (UTC)', 'Alert', 'Change'],
          a.transitions.rows.map((t) => [
            utc(t.at),
            e(t.alertName),
            t.to === 'firing'
              ? `<strong style="color:#c62828">${e(transitionWords(t))}</strong>`
              : `<span style="color:#2e7d32">${e(transitionWords(t))}</span>`,
          ]),
          [false, false, false],
        ),
      );
      if (a.transitions.total > a.transitions.rows.length) {
        html.push(`<p>… and ${int(a.transitions.total - a.transitions.rows.length)} more.</p>`);
      }
    }
  }

  if (d.lowConfidence) {
    text.push('LOW-CONFIDENCE TRACES (below 0.5)');
    if (d.lowConfidence.length === 0) text.push('  None in the period.');
    for (const t of d.lowConfidence) {
      text.push(`  ${t.confidence.toFixed(3)} ${t.agentName} (${t.status}): ${appUrl}/traces/${t.id}`);
    }
    text.push('');
    html.push(
      `<h2 style="font-size:16px;color:#0d2b5c">Low-confidence traces</h2>`,
      d.lowConfidence.length === 0
        ? '<p>None in the period.</p>'
        : htmlTable(
            ['Confidence', 'Agent', 'Status', 'Trace'],
            d.lowConfidence.map((t) => [
              t.confidence.toFixed(3),
              e(t.agentName),
              t.status,
              `<a href="${e(`${appUrl}/traces/${t.id}`)}">${e(t.id)}</a>`,
            ]),
            [true, false, false, false],
          ),
    );
  }

  text.push(`Dashboard: ${appUrl}`);
  html.push(`<p style="font-size:13px;color:#555">Dashboard: <a href="${e(appUrl)}">${e(appUrl)}</a></p>`);
  return {
    subject,
    text: text.join('\n'),
    html: `<!doctype html><html lang="en"><body style="font-family:system-ui,Arial,sans-serif;line-height:1.5;color:#1a1a1a">${html.join('\n')}</body></html>`,
  };
}
