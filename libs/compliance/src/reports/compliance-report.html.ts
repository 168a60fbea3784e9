import { escapeHtml } from '#platform';
import type { ComplianceReportData, ReportTraceStatus } from './report-figures.js';

const STATUS_COLOURS: Record<ReportTraceStatus, string> = {
  approved: '#2e7d32',
  success: '#00838f',
  flagged: '#e0a100',
  blocked: '#c62828',
};
const CLAUSE_LABELS: Record<string, string> = {
  covered: 'Covered',
  partial: 'Partial',
  gap: 'Gap',
  'not-applicable': 'Not applicable',
};
const FRAMEWORK_TITLES: Record<string, string> = {
  'iso-42001': 'ISO/IEC 42001',
  'eu-ai-act': 'EU AI Act',
  'nist-rmf': 'NIST AI RMF',
};
const CATEGORY_LABELS: Record<string, string> = {
  death: 'Death',
  widespread_infringement: 'Widespread infringement',
  critical_infrastructure: 'Critical infrastructure',
  other: 'Other serious incident',
};

const e = escapeHtml;
const int = (n: number): string => n.toLocaleString('en-GB');
const pct = (part: number, whole: number): string =>
  whole > 0 ? `${((part / whole) * 100).toFixed(1)} %` : '–';
/** An instant as "2026-03-01 10:00 UTC". */
export const utc = (d: Date): string => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
const day = (d: Date): string => d.toISOString().slice(0, 10);

/** "3 d 4 h 12 min" from seconds. */
export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return `${m} min`;
}

/** The period's end is exclusive: a period ending at midnight is shown as ending the day before. */
function periodText(from: Date, to: Date): string {
  const last = new Date(to.getTime() - 1);
  const whole = (d: Date) => d.getTime() % 86_400_000 === 0;
  return whole(from) && whole(to) ? `${day(from)} to ${day(last)} (UTC)` : `${utc(from)} to ${utc(to)}`;
}

/**
 * The chart of trace volume: one stacked bar per day (per week beyond 62 days), as inline SVG, with its axis,
 * gridlines and legend; nothing is fetched when it renders.
 */
export function volumeChart(daily: ComplianceReportData['volume']['daily'], from: Date, to: Date): string {
  const statuses: ReportTraceStatus[] = ['approved', 'success', 'flagged', 'blocked'];
  const spanDays = Math.max(1, Math.ceil((to.getTime() - from.getTime()) / 86_400_000));
  const weekly = spanDays > 62;
  const buckets = new Map<string, Record<ReportTraceStatus, number>>();
  const bucketOf = (iso: string): string => {
    if (!weekly) return iso;
    const t = Date.parse(`${iso}T00:00:00Z`);
    const monday = t - ((new Date(t).getUTCDay() + 6) % 7) * 86_400_000;
    return new Date(monday).toISOString().slice(0, 10);
  };
  // Every bucket of the period, so that quiet days show as gaps rather than disappearing.
  for (let t = Date.parse(`${day(from)}T00:00:00Z`); t < to.getTime(); t += 86_400_000) {
    const key = bucketOf(new Date(t).toISOString().slice(0, 10));
    if (!buckets.has(key)) buckets.set(key, { approved: 0, success: 0, flagged: 0, blocked: 0 });
  }
  for (const row of daily) {
    const b = buckets.get(bucketOf(row.day));
    if (b) for (const s of statuses) b[s] += row[s];
  }
  const entries = [...buckets.entries()];
  const max = Math.max(1, ...entries.map(([, b]) => statuses.reduce((sum, s) => sum + b[s], 0)));
  const step = niceStep(max / 4);
  const top = Math.ceil(max / step) * step;
  const W = 680;
  const H = 240;
  const left = 56;
  const bottom = 28;
  const plotW = W - left - 8;
  const plotH = H - bottom - 10;
  const slot = plotW / Math.max(1, entries.length);
  const barW = Math.max(1, slot * 0.7);
  const parts: string[] = [];
  for (let v = 0; v <= top; v += step) {
    const y = 10 + plotH - (v / top) * plotH;
    parts.push(
      `<line x1="${left}" x2="${W - 8}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#ddd" stroke-width="1"/>`,
      `<text x="${left - 6}" y="${(y + 4).toFixed(1)}" font-size="10" text-anchor="end" fill="#444">${int(v)}</text>`,
    );
  }
  const labelEvery = Math.ceil(entries.length / 10);
  entries.forEach(([key, b], i) => {
    const x = left + i * slot + (slot - barW) / 2;
    let y = 10 + plotH;
    for (const s of statuses) {
      if (b[s] === 0) continue;
      const h = (b[s] / top) * plotH;
      y -= h;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${STATUS_COLOURS[s]}"/>`,
      );
    }
    if (i % labelEvery === 0) {
      parts.push(
        `<text x="${(x + barW / 2).toFixed(1)}" y="${H - 12}" font-size="9" text-anchor="middle" fill="#444">${key.slice(5)}</text>`,
      );
    }
  });
  const legend = statuses
    .map(
      (s, i) =>
        `<rect x="${left + i * 110}" y="${H + 6}" width="10" height="8" fill="${STATUS_COLOURS[s]}"/>` +
        `<text x="${left + i * 110 + 14}" y="${H + 14}" font-size="10" fill="#222">${s}</text>`,
    )
    .join('');
  const title = weekly ? 'Traces per week (weeks start on Monday, UTC)' : 'Traces per day (UTC)';
  return `<figure><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${title}" width="${W}" height="${H + 20}" viewBox="0 0 ${W} ${H + 20}">
<line x1="${left}" x2="${left}" y1="10" y2="${10 + plotH}" stroke="#888"/>${parts.join('')}${legend}</svg>
<figcaption>${title}</figcaption></figure>`;
}

function niceStep(raw: number): number {
  if (raw <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const n = raw / power;
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * power;
}

/** How the chain was verified for this report: from the first entry, or after the prefix verified before. */
function verifiedText(chain: ComplianceReportData['chain'], generatedAt: Date): string {
  if (chain.verifiedFrom <= 1) return `every entry, from the first, at ${utc(generatedAt)}`;
  const full = chain.fullyVerifiedAt ? utc(chain.fullyVerifiedAt) : 'never';
  return (
    `entries ${int(chain.verifiedFrom)} onwards at ${utc(generatedAt)}, after the entries the last ` +
    `verification passed; every entry, from the first, at ${full}`
  );
}

/**
 * The compliance report as one HTML document for Chromium to print (its sections in the order of
 * docs/compliance-officers.md, "The compliance PDF").
 */
export function complianceReportHtml(r: ComplianceReportData): string {
  const title = `Compliance report: ${r.organization.name}`;
  const total = r.volume.total;
  const statusRows = r.volume.byStatus
    .map(
      (s) =>
        `<tr><td><span class="swatch" style="background:${STATUS_COLOURS[s.status]}"></span>${s.status}</td>` +
        `<td class="num">${int(s.traces)}</td><td class="num">${pct(s.traces, total)}</td></tr>`,
    )
    .join('');
  const confidenceRows = r.volume.byStatus
    .map(
      (s) =>
        `<tr><td>${s.status}</td><td class="num">${s.averageConfidence === null ? '–' : s.averageConfidence.toFixed(3)}</td>` +
        `<td class="num">${int(s.traces)}</td></tr>`,
    )
    .join('');
  const policyRows =
    r.policies.length === 0
      ? '<tr><td colspan="4">No active policy.</td></tr>'
      : r.policies
          .map(
            (p) =>
              `<tr><td>${e(p.name)}</td><td>${p.outcome}</td><td class="num">${int(p.matched)}</td>` +
              `<td class="num">${pct(p.matched, total)}</td></tr>`,
          )
          .join('');
  const chain = r.chain;
  const chainBreak = chain.brokenAt
    ? `<tr><th>First break</th><td>entry ${int(chain.brokenAt.sequence)}${chain.brokenAt.id ? ` (${e(chain.brokenAt.id)})` : ''}: ${e(chain.brokenAt.reason.replace(/_/g, ' '))}</td></tr>`
    : '<tr><th>First break</th><td>none</td></tr>';
  const incidentRows =
    r.incidents.rows.length === 0
      ? '<tr><td colspan="5">No open incident.</td></tr>'
      : r.incidents.rows
          .map(
            (i) =>
              `<tr${i.overdue ? ' class="overdue"' : ''}><td>${e(i.title)}</td><td>${CATEGORY_LABELS[i.category]}</td>` +
              `<td>${utc(i.awareAt)}</td><td>${utc(i.deadlineAt)}</td>` +
              `<td>${i.overdue ? '<strong>OVERDUE</strong>' : `${duration(i.timeLeftSeconds)} left`}</td></tr>`,
          )
          .join('');
  const moreIncidents =
    r.incidents.open > r.incidents.rows.length
      ? `<p>And ${int(r.incidents.open - r.incidents.rows.length)} more open incidents, with later deadlines.</p>`
      : '';
  const mapping = r.mapping
    .map((m) => {
      const c = m.coverage;
      const rows = m.clauses
        .map(
          (cl) =>
            `<tr><td class="clause">${e(cl.clauseId)}</td><td>${e(cl.title)}</td><td class="status-${cl.status}">${CLAUSE_LABELS[cl.status]}</td></tr>`,
        )
        .join('');
      return `<h3>${FRAMEWORK_TITLES[m.framework]}: ${c.percent.toFixed(1)} % covered</h3>
<p class="summary">${c.covered} covered, ${c.partial} partial, ${c.gap} gaps, ${c.notApplicable} not applicable, of ${c.total} clauses.</p>
<table><thead><tr><th>Clause</th><th>Title</th><th>Status</th></tr></thead><tbody>${rows}</tbody></table>`;
    })
    .join('');
  const friaRows = r.frias
    .map((f) => `<tr><td>${f.status}</td><td class="num">${int(f.count)}</td></tr>`)
    .join('');
  const oldest = r.review.oldest
    ? `${utc(r.review.oldest)} (${duration(Math.max(0, (r.generatedAt.getTime() - r.review.oldest.getTime()) / 1000))} ago)`
    : 'none waiting';

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${e(title)}</title>
<style>
  @page { size: A4; margin: 18mm 16mm 20mm 16mm; }
  body { font-family: "Liberation Sans", "DejaVu Sans", Arial, Helvetica, sans-serif; font-size: 10.5pt; color: #1a1a1a; line-height: 1.4; font-variant-ligatures: none; font-feature-settings: "liga" 0, "clig" 0; }
  h1 { font-size: 26pt; margin: 0 0 8mm; color: #0d2b5c; }
  h2 { font-size: 15pt; color: #0d2b5c; border-bottom: 1.5px solid #0d2b5c; padding-bottom: 2px; margin: 9mm 0 3mm; break-after: avoid; }
  h3 { font-size: 12pt; margin: 6mm 0 1mm; break-after: avoid; }
  table { border-collapse: collapse; width: 100%; margin: 2mm 0 3mm; }
  th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #ddd; vertical-align: top; }
  thead th { background: #eef2f8; }
  tr { break-inside: avoid; }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  td.clause { white-space: nowrap; font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 9pt; }
  .kv th { width: 45mm; background: none; }
  .swatch { display: inline-block; width: 9px; height: 9px; margin-right: 6px; }
  .cover { height: 230mm; display: flex; flex-direction: column; justify-content: center; break-after: page; }
  .cover .meta th { width: 40mm; }
  .hash { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 9pt; word-break: break-all; }
  .valid { color: #2e7d32; font-weight: bold; }
  .invalid { color: #c62828; font-weight: bold; }
  .overdue td { color: #c62828; }
  .status-covered { color: #2e7d32; }
  .status-partial { color: #a86b00; }
  .status-gap { color: #c62828; }
  .status-not-applicable { color: #666; }
  figure { margin: 2mm 0; }
  figcaption { font-size: 9pt; color: #555; }
  .summary { margin: 0 0 1mm; }
  .note { font-size: 9pt; color: #555; }
</style></head>
<body>
<section class="cover">
  <p class="note">AI governance</p>
  <h1>Compliance report</h1>
  <table class="kv meta">
    <tr><th>Organization</th><td>${e(r.organization.name)}</td></tr>
    <tr><th>Period</th><td>${periodText(r.period.from, r.period.to)}</td></tr>
    <tr><th>Generated at</th><td>${utc(r.generatedAt)}</td></tr>
    <tr><th>Schema version</th><td>${e(r.schemaVersion)}</td></tr>
  </table>
  <p class="note">Figures cover the traces received in the period. The review backlog, the audit chain, the incident
  clock, the regulator mapping and the impact assessments are as they stood when the report was generated.</p>
</section>

<h2>1. Trace volume by status</h2>
<p>${int(total)} traces in the period.</p>
<table><thead><tr><th>Status</th><th class="num">Traces</th><th class="num">Share</th></tr></thead><tbody>${statusRows}</tbody></table>
${volumeChart(r.volume.daily, r.period.from, r.period.to)}

<h2>2. Average confidence by status</h2>
<table><thead><tr><th>Status</th><th class="num">Average confidence</th><th class="num">Traces</th></tr></thead><tbody>${confidenceRows}</tbody></table>

<h2>3. Policy coverage</h2>
<p>Each active policy and the traces of the period it matched.</p>
<table><thead><tr><th>Policy</th><th>Outcome</th><th class="num">Traces matched</th><th class="num">Share of traces</th></tr></thead><tbody>${policyRows}</tbody></table>

<h2>4. Review backlog</h2>
<table class="kv">
  <tr><th>Pending</th><td>${int(r.review.pending)}</td></tr>
  <tr><th>Escalated</th><td>${int(r.review.escalated)}</td></tr>
  <tr><th>Oldest waiting since</th><td>${oldest}</td></tr>
</table>

<h2>5. Audit chain verification</h2>
<table class="kv">
  <tr><th>Result</th><td>${chain.valid ? '<span class="valid">Valid</span>: every entry links to the one before it' : '<span class="invalid">Broken</span>'}</td></tr>
  <tr><th>Entries</th><td>${int(chain.totalEntries)}</td></tr>
  <tr><th>Head hash</th><td class="hash">${chain.headHash ?? 'no entry yet'}</td></tr>
  ${chainBreak}
  <tr><th>Verified</th><td>${verifiedText(chain, r.generatedAt)}</td></tr>
</table>

<h2>6. Incident clock (EU AI Act article 73)</h2>
<p>${int(r.incidents.open)} open incidents, ${int(r.incidents.overdue)} overdue.</p>
<table class="incidents"><colgroup><col style="width:30%"><col style="width:19%"><col style="width:17%"><col style="width:17%"><col style="width:17%"></colgroup>
<thead><tr><th>Incident</th><th>Category</th><th>Aware at</th><th>Deadline</th><th>Time left</th></tr></thead><tbody>${incidentRows}</tbody></table>
${moreIncidents}

<h2>7. Regulator mapping</h2>
${mapping}

<h2>8. Fundamental-rights impact assessments by status</h2>
<table><thead><tr><th>Status</th><th class="num">Assessments</th></tr></thead><tbody>${friaRows}</tbody></table>
</body></html>`;
}

/** The page footer Chromium prints on every page: the organization, the period and "Page n of m". */
export function footerTemplate(r: ComplianceReportData): string {
  return `<div style="font-size:8px;width:100%;padding:0 16mm;color:#555;display:flex;justify-content:space-between;font-family:'Liberation Sans',Arial,sans-serif">
<span>${e(r.organization.name)}: compliance report, ${periodText(r.period.from, r.period.to)}</span>
<span>Page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>`;
}
