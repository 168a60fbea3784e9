import { escapeHtml as e } from '#platform';
import { utc } from '../reports/compliance-report.html.js';
import type {
  ExplanationCorrectionDto,
  ExplanationHumanReviewDto,
  TraceExplanationDto,
} from './dto/trace-explanation.dto.js';
import { PERSON_PAGE_STYLE } from './person-page.style.js';
import { percent } from './policy-sentence.js';

/** What the PDF of an explanation shows: the explanation, and who made the decision. */
export interface ExplanationDocument {
  explanation: TraceExplanationDto;
  organizationName: string;
  generatedAt: Date;
}

export const quoted = (text: string): string => `“${e(text)}”`;

/** One matched rule, in plain words, as a list item (the explanation and the person's report). */
export function ruleItem(p: TraceExplanationDto['policies'][number]): string {
  return (
    `<li>The rule ${quoted(p.name)}: ${e(p.explanation)} ` +
    (p.outcome === 'block'
      ? 'Under this rule such a decision is refused.'
      : 'Under this rule such a decision is held for a person to review.') +
    '</li>'
  );
}

/** The decision's status in the words of the person concerned. */
export function outcomeText(x: TraceExplanationDto): string {
  switch (x.decision.status) {
    case 'approved':
      return 'Approved';
    case 'blocked':
      return 'Refused (blocked)';
    case 'flagged':
      return 'Held for a person to review';
    default:
      return x.corrections[0]?.action === 'correct'
        ? 'Corrected by a person after the decision (see “Later corrections” below)'
        : 'Confirmed by a person after the decision';
  }
}

export function reviewText(x: TraceExplanationDto, review: ExplanationHumanReviewDto | null): string {
  if (review) {
    const verb =
      review.decision === 'approved'
        ? 'approved the decision'
        : review.decision === 'rejected'
          ? 'rejected the decision'
          : 'passed the decision on to a more senior reviewer, who has not decided yet';
    const who =
      review.via === 'feedback'
        ? 'A person'
        : review.reviewerRole
          ? `A person with the role ${quoted(review.reviewerRole)} in the organization`
          : 'A person of the organization';
    const how = review.via === 'feedback' ? ', in feedback the organization recorded' : '';
    const notes = review.notes ? `<p>The reason they gave: ${quoted(review.notes)}</p>` : '';
    return `<p>${who} reviewed it on ${utc(new Date(review.decidedAt))} and ${verb}${how}.</p>${notes}`;
  }
  if (x.autoApprovedBy) {
    return (
      '<p>No person reviewed this decision on its own. It was approved automatically: people in the ' +
      'organization had approved decisions of this same kind consistently, and someone responsible agreed that ' +
      `such decisions be approved without a review each time (approval pattern ${e(x.autoApprovedBy)}).</p>`
    );
  }
  if (x.decision.status === 'flagged') return '<p>The decision is waiting for a person to review it.</p>';
  return '<p>No person reviewed this decision before it took effect.</p>';
}

export function correctionText(c: ExplanationCorrectionDto): string {
  const when = utc(new Date(c.at));
  const notes = c.notes ? ` The reason given: ${quoted(c.notes)}.` : '';
  if (c.action === 'approve') return `<p>On ${when} a person confirmed the decision.${notes}</p>`;
  const from = c.originalDecision ? ` It was ${quoted(c.originalDecision)};` : '';
  const to = c.correctedDecision ? ` it is now ${quoted(c.correctedDecision)}.` : '';
  const confidence =
    c.correctedConfidence === null ? '' : ` The confidence they gave is ${percent(c.correctedConfidence)}.`;
  return `<p>On ${when} a person corrected the decision.${from}${to}${confidence}${notes}</p>`;
}

/**
 * The explanation as a document for the person the decision concerns: plain words, every statement from the
 * explanation (so from the records), nothing an auditor needs and they do not (hashes, ids of people).
 */
export function explanationHtml(d: ExplanationDocument): string {
  const x = d.explanation;
  const org = e(d.organizationName);
  const agentName = x.agent.name
    ? quoted(x.agent.name)
    : 'an AI system the organization has since removed (its name is no longer kept)';
  const purpose = x.agent.description
    ? `<p>Its purpose, as the organization describes it: ${quoted(x.agent.description)}.</p>`
    : '<p>The organization has not recorded a purpose for this system.</p>';
  const policies = x.policies.length
    ? `<p>These rules of the organization applied to the decision:</p><ul>${x.policies.map(ruleItem).join('')}</ul>`
    : '<p>None of the organization’s rules applied to this decision.</p>';
  const corrections = x.corrections.length
    ? `<h2>Later corrections</h2>${x.corrections.map(correctionText).join('')}`
    : '';
  const erased = x.erasedAt
    ? `<h2>Erased details</h2><p>The details of the request and of the system’s answer were erased on ` +
      `${utc(new Date(x.erasedAt))}. This explanation is made from what the organization still keeps about the ` +
      'decision.</p>'
    : '';
  const contact = x.contact
    ? `<p>To contest this decision, or to ask for a person to look at it again, contact:</p><p class="contact">${e(x.contact)}</p>`
    : `<p>${org} has not named a contact for contesting decisions. Contact ${org} directly, and quote the ` +
      'reference above.</p>';
  const title = `Explanation of a decision: ${d.organizationName}`;

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${e(title)}</title>
<style>${PERSON_PAGE_STYLE}
</style></head>
<body>
<h1>How a decision about you was made</h1>
<p>${org} used an AI system in making a decision that concerns you. Article 86 of the EU AI Act gives you the right
to a clear explanation of the part the AI system played in it. This explanation is taken from ${org}’s records:
what the system decided, which of ${org}’s rules applied, and whether a person reviewed the decision.</p>
<p class="note">Reference of the decision: ${e(x.traceId)}. Decision made on ${utc(new Date(x.decision.madeAt))}.</p>

<h2>The AI system</h2>
<p>The decision was made with ${agentName}.</p>
${purpose}

<h2>The decision</h2>
<p><strong>Outcome: ${outcomeText(x)}.</strong></p>
<p>The system’s confidence in its decision: ${percent(x.decision.confidence)} (how sure the system was, from 0% to
100%).</p>

<h2>The rules that applied</h2>
${policies}

<h2>Review by a person</h2>
${reviewText(x, x.humanReview)}
${corrections}
${erased}
<section class="contest">
<h2>How to contest this decision</h2>
${contact}
</section>
<p class="note">Produced on ${utc(d.generatedAt)}. Every statement in it comes from the organization’s records;
none was generated for it.</p>
</body></html>`;
}

/** The footer Chromium prints on every page: the organization, the reference and "Page n of m". */
export function explanationFooter(d: ExplanationDocument): string {
  return `<div style="font-size:8px;width:100%;padding:0 18mm;color:#555;display:flex;justify-content:space-between;font-family:'Liberation Sans',Arial,sans-serif">
<span>${e(d.organizationName)}: explanation of decision ${e(d.explanation.traceId)}</span>
<span>Page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>`;
}
