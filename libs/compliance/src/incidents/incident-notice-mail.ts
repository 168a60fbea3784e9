import { escapeHtml, type RenderedMail } from '#platform';
import type { IncidentCategory } from './incident.schema.js';

/** Which notice: the deadline is 24 hours away, or it has passed. */
export type IncidentNoticeKind = 'due_soon' | 'overdue';

/** The template names of the notices in the outbox (for logs and the operator listing). */
export const INCIDENT_NOTICE_TEMPLATES: Record<IncidentNoticeKind, string> = {
  due_soon: 'incident-due-soon',
  overdue: 'incident-overdue',
};

export interface IncidentNoticeInput {
  id: string;
  title: string;
  category: IncidentCategory;
  awareAt: Date;
  deadlineAt: Date;
}

const CATEGORY_LABELS: Record<IncidentCategory, string> = {
  death: 'death of a person',
  widespread_infringement: 'widespread infringement',
  critical_infrastructure: 'serious disruption of critical infrastructure',
  other: 'other serious incident',
};

export function incidentNoticeSubject(kind: IncidentNoticeKind, title: string): string {
  return kind === 'due_soon'
    ? `Incident "${title}" must be reported within 24 hours`
    : `Incident "${title}" is overdue for reporting`;
}

/**
 * The e-mail telling an organization's owners and admins that an open incident's article 73 deadline is 24 hours
 * away (`due_soon`) or has passed (`overdue`): its title, category, awareness time and deadline (ISO 8601, UTC) and
 * a link to it on the dashboard (APP_URL). Every value is escaped in the HTML part.
 */
export function incidentNoticeMail(
  kind: IncidentNoticeKind,
  incident: IncidentNoticeInput,
  appUrl: string,
): RenderedMail {
  const subject = incidentNoticeSubject(kind, incident.title);
  const url = `${appUrl.replace(/\/+$/, '')}/incidents/${encodeURIComponent(incident.id)}`;
  const awareAt = incident.awareAt.toISOString();
  const deadline = incident.deadlineAt.toISOString();
  const category = `${CATEGORY_LABELS[incident.category]} (${incident.category})`;
  const intro =
    kind === 'due_soon'
      ? `The serious incident "${incident.title}" is still open and its reporting deadline is less than 24 hours away.`
      : `The serious incident "${incident.title}" is still open and its reporting deadline has passed.`;
  const article =
    'Article 73 of the EU AI Act requires serious incidents to be reported to the market surveillance ' +
    'authority within this deadline. Once reported, mark the incident as reported to stop its clock.';
  const facts: [string, string][] = [
    ['Title', incident.title],
    ['Category', category],
    ['Aware since', awareAt],
    ['Reporting deadline', deadline],
  ];
  const text = [
    'Hello,',
    '',
    intro,
    '',
    ...facts.map(([label, value]) => `${label}: ${value}`),
    '',
    article,
    '',
    `Open the incident: ${url}`,
  ].join('\n');
  const rows = facts
    .map(
      ([label, value]) =>
        `<tr><th align="left" style="padding:2px 12px 2px 0">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    )
    .join('\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5">
<p>Hello,</p>
<p>${escapeHtml(intro)}</p>
<table>
${rows}
</table>
<p>${escapeHtml(article)}</p>
<p><a href="${escapeHtml(url)}" style="display:inline-block;padding:10px 16px;background:#1f4fd1;color:#fff;border-radius:6px;text-decoration:none">Open the incident</a></p>
<p style="font-size:13px;color:#555">Or open this link: ${escapeHtml(url)}</p>
</body></html>`;
  return { subject, text, html };
}
