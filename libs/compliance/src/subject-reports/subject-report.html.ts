import { escapeHtml as e } from '#platform';
import type { TraceExplanationDto } from '../explanations/dto/trace-explanation.dto.js';
import {
  correctionText,
  outcomeText,
  quoted,
  reviewText,
  ruleItem,
} from '../explanations/explanation.html.js';
import { PERSON_PAGE_STYLE } from '../explanations/person-page.style.js';
import { percent } from '../explanations/policy-sentence.js';
import { utc } from '../reports/compliance-report.html.js';

/** What the PDF of a subject's report shows: the decisions about the person, each one explained. */
export interface SubjectReportDocument {
  /** The reference the person is known by (they asked for it; it is never logged). */
  ref: string;
  organizationName: string;
  /** The newest decisions about the person, newest first, each explained as GET /traces/:id/explanation does. */
  decisions: readonly TraceExplanationDto[];
  /** How many decisions the records hold about the person; more than `decisions` when the report is bounded. */
  total: number;
  /** The organization's contest contact; null when none is set. */
  contact: string | null;
  generatedAt: Date;
}

/** Times as utc() writes them, kept on one line (a line may otherwise break after a date's hyphen). */
const unbroken = (html: string): string =>
  html.replace(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/g, (time) => `<span class="time">${time}</span>`);
const decisionsCount = (n: number): string =>
  n === 1 ? '1 decision' : `${n.toLocaleString('en')} decisions`;

/** The outcome in a few words, for the overview table (the details say more). */
function shortOutcome(x: TraceExplanationDto): string {
  switch (x.decision.status) {
    case 'approved':
      return 'Approved';
    case 'blocked':
      return 'Refused';
    case 'flagged':
      return 'Waiting for a person';
    default:
      return x.corrections[0]?.action === 'correct' ? 'Corrected by a person' : 'Confirmed by a person';
  }
}

function systemText(x: TraceExplanationDto): string {
  const name = x.agent.name
    ? `<p>${quoted(x.agent.name)}.</p>`
    : '<p>An AI system the organization has since removed (its name is no longer kept).</p>';
  const purpose = x.agent.description
    ? `<p>What it is for: ${quoted(x.agent.description)}.</p>`
    : '<p>The organization has not recorded what this system is for.</p>';
  return name + purpose;
}

function rulesText(x: TraceExplanationDto): string {
  if (x.policies.length === 0) return '<p>None of the organization’s rules applied.</p>';
  return `<ul>${x.policies.map(ruleItem).join('')}</ul>`;
}

function decisionSection(x: TraceExplanationDto, n: number, organizationName: string): string {
  const row = (label: string, body: string) => `<tr><th scope="row">${label}</th><td>${body}</td></tr>`;
  const erased = x.erasedAt
    ? row(
        'Erased details',
        `<p>The details of this decision (what was asked and the system’s answer) were erased on ` +
          `${utc(new Date(x.erasedAt))} at your request. What is shown here is what ${e(organizationName)} still ` +
          'keeps about it.</p>',
      )
    : '';
  const corrections = x.corrections.length
    ? row('Later corrections', x.corrections.map(correctionText).join(''))
    : '';
  return `<section class="decision${x.erasedAt ? ' erased' : ''}">
<h3>Decision ${n}: ${utc(new Date(x.decision.madeAt))}</h3>
<table class="facts">
${row('AI system', systemText(x))}
${row('Outcome', `<p><strong>${outcomeText(x)}.</strong></p><p>The system’s confidence: ${percent(x.decision.confidence)}.</p>`)}
${row('Rules that applied', rulesText(x))}
${row('A person’s part', reviewText(x, x.humanReview))}
${corrections}
${erased}
</table>
<p class="note">Reference of the decision: ${e(x.traceId)}</p>
</section>`;
}

function overview(d: SubjectReportDocument): string {
  const org = e(d.organizationName);
  const shown = d.decisions.length;
  if (d.total === 0) {
    return `<p><strong>${org}’s records hold no decision about you under this reference.</strong></p>`;
  }
  const earlier = d.total - shown;
  const more =
    earlier > 0
      ? `<p class="more">${org} holds ${decisionsCount(d.total)} about you. This report shows the newest ` +
        `${shown.toLocaleString('en')}. ${earlier === 1 ? 'The earliest one is' : `The ${earlier.toLocaleString('en')} earlier ones are`} ` +
        `not in it: ask ${org} for ${earlier === 1 ? 'it' : 'them'}.</p>`
      : `<p>${org} holds ${decisionsCount(d.total)} about you. All of them are in this report.</p>`;
  const rows = d.decisions
    .map(
      (x, i) =>
        `<tr><td>${i + 1}</td><td>${utc(new Date(x.decision.madeAt))}</td><td>${
          x.agent.name ? e(x.agent.name) : 'A removed system'
        }</td><td>${shortOutcome(x)}${x.erasedAt ? ' (details erased)' : ''}</td></tr>`,
    )
    .join('');
  return `${more}
<table class="overview"><thead><tr><th>#</th><th>When</th><th>AI system</th><th>Outcome</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

function contest(d: SubjectReportDocument): string {
  const org = e(d.organizationName);
  const quote = d.decisions.length ? 'Quote the reference of the decision, shown under each one.' : '';
  const contact = d.contact
    ? `<p>If you disagree with a decision, you can contest it and ask for a person to look at it again. ` +
      `Contact:</p><p class="contact">${e(d.contact)}</p>${quote ? `<p>${quote}</p>` : ''}`
    : `<p>${org} has not named a contact for contesting decisions. If you disagree with a decision, contact ` +
      `${org} directly.${quote ? ` ${quote}` : ''}</p>`;
  return `<section class="contest">
<h2>How to contest a decision</h2>
${contact}
<p>You can also complain to a data protection authority.</p>
</section>`;
}

/**
 * The report for the person the decisions are about (GDPR art. 15): plain words and short sentences, every
 * statement from the records, each decision explained as GET /traces/:id/explanation explains it (the same facts,
 * the same sentences), nothing an auditor needs and the person does not (hashes, who reviewed).
 */
export function subjectReportHtml(d: SubjectReportDocument): string {
  const org = e(d.organizationName);
  const title = `Decisions about you: ${d.organizationName}`;
  const details = d.decisions.length
    ? `<h2>Each decision</h2>\n${d.decisions.map((x, i) => unbroken(decisionSection(x, i + 1, d.organizationName))).join('\n')}`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${e(title)}</title>
<style>${PERSON_PAGE_STYLE}
  h3 { font-size: 12pt; color: #0d2b5c; margin: 0 0 2mm; break-after: avoid; }
  ul { margin: 0; padding-left: 5mm; }
  .ref { font-size: 12pt; font-weight: bold; overflow-wrap: anywhere; }
  .more { padding: 2mm 3mm; background: #fff6df; border-left: 3px solid #c98a00; }
  table { border-collapse: collapse; width: 100%; }
  table.overview { font-size: 10pt; margin-top: 3mm; }
  table.overview th, table.overview td { text-align: left; padding: 1.2mm 2mm; border-bottom: 1px solid #d5dbe5; }
  table.overview thead th { background: #eef2f8; color: #0d2b5c; }
  table.overview tr { break-inside: avoid; }
  .decision { border: 1px solid #d5dbe5; border-radius: 2mm; padding: 4mm; margin: 0 0 5mm; break-inside: avoid; }
  .decision.erased { background: #f7f7f7; }
  table.facts th { width: 34mm; text-align: left; vertical-align: top; padding: 1.5mm 3mm 1.5mm 0; color: #333; font-weight: bold; }
  table.facts td { vertical-align: top; padding: 1.5mm 0; }
  table.facts tr + tr th, table.facts tr + tr td { border-top: 1px solid #eceff4; }
  .time { white-space: nowrap; }
</style></head>
<body>
<h1>Decisions about you</h1>
<p>${org} uses AI systems to help make some of its decisions. You asked ${org} which decisions it made about
you. The EU General Data Protection Regulation (GDPR, article 15) gives you this right.</p>
<p>This report lists each decision about you that ${org}’s records hold, newest first. For each one it says when
it was made, which AI system was used and what it is for, what was decided, which of ${org}’s rules applied, and
whether a person was involved.</p>
<p>Your reference at ${org}:</p>
<p class="ref">${e(d.ref)}</p>

<h2>In short</h2>
${overview(d)}
${details}
${contest(d)}
<p class="note">Produced on ${utc(d.generatedAt)}. Every statement in it comes from ${org}’s records; none was
generated for it.</p>
</body></html>`;
}

/** The footer Chromium prints on every page: the organization and "Page n of m" (not the reference). */
export function subjectReportFooter(d: SubjectReportDocument): string {
  return `<div style="font-size:8px;width:100%;padding:0 18mm;color:#555;display:flex;justify-content:space-between;font-family:'Liberation Sans',Arial,sans-serif">
<span>${e(d.organizationName)}: decisions about you, produced on ${utc(d.generatedAt)}</span>
<span>Page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>`;
}
