import { describe, expect, it } from 'vitest';
import type { TraceExplanationDto } from '../explanations/dto/trace-explanation.dto.js';
import { type SubjectReportDocument, subjectReportFooter, subjectReportHtml } from './subject-report.html.js';

const DECISION: TraceExplanationDto = {
  traceId: '66a000000000000000000001',
  agent: { id: '66a000000000000000000002', name: 'Loan assistant', description: 'Pre-screens loans' },
  decision: { status: 'approved', confidence: 0.9, madeAt: '2026-03-02T09:04:00.000Z' },
  policies: [],
  humanReview: null,
  autoApprovedBy: null,
  corrections: [],
  contact: null,
  erasedAt: null,
};
const doc = (over: Partial<SubjectReportDocument> = {}): SubjectReportDocument => ({
  ref: 'customer 42',
  organizationName: 'Acme Lending',
  decisions: [DECISION],
  total: 1,
  contact: null,
  generatedAt: new Date('2026-03-05T12:00:00.000Z'),
  ...over,
});

/** The document without the spans that keep times on one line. */
const plain = (html: string) => html.replace(/<span class="time">([^<]*)<\/span>/g, '$1');

describe('the subject’s report document', () => {
  it('escapes what the organization and the reference hold', () => {
    const out = subjectReportHtml(
      doc({
        ref: '<ref>',
        organizationName: 'A <Corp>',
        contact: '<script>x</script>',
        decisions: [{ ...DECISION, agent: { id: 'a', name: '<b>Bot</b>', description: 'a & b' } }],
      }),
    );
    expect(out).not.toMatch(/<(b|ref|script|Corp)>/);
    expect(out).toContain('&lt;ref&gt;');
    expect(out).toContain('&lt;b&gt;Bot&lt;/b&gt;');
    expect(subjectReportFooter(doc({ organizationName: 'A <Corp>' }))).toContain(
      'A &lt;Corp&gt;: decisions about you',
    );
  });

  it('says when there is no decision, and does not ask to quote a reference then', () => {
    const out = subjectReportHtml(doc({ decisions: [], total: 0 }));
    expect(out).toContain('Acme Lending’s records hold no decision about you under this reference.');
    expect(out).not.toContain('Each decision');
    expect(out).toContain(
      'has not named a contact for contesting decisions. If you disagree with a decision, contact Acme Lending directly.</p>',
    );
  });

  it('says how many decisions the records hold beyond the bound', () => {
    const many = subjectReportHtml(doc({ total: 1234 }));
    expect(many).toContain(
      'Acme Lending holds 1,234 decisions about you. This report shows the newest 1. The 1,233 earlier ones are not in it: ask Acme Lending for them.',
    );
    expect(subjectReportHtml(doc({ total: 2 }))).toContain(
      'The earliest one is not in it: ask Acme Lending for it.',
    );
    expect(subjectReportHtml(doc())).toContain(
      'Acme Lending holds 1 decision about you. All of them are in this report.',
    );
  });

  it('explains each decision with the explanation’s sentences, and notes an erasure', () => {
    const html = subjectReportHtml(
      doc({
        contact: 'appeals@acme.example',
        decisions: [
          {
            ...DECISION,
            decision: { ...DECISION.decision, status: 'blocked', confidence: 0.85 },
            policies: [
              {
                policyId: 'p',
                name: 'Cards',
                outcome: 'block',
                explanation: 'The output contained a payment-card number.',
              },
            ],
            erasedAt: '2026-03-04T00:00:00.000Z',
          },
          {
            ...DECISION,
            humanReview: {
              decision: 'approved',
              decidedAt: '2026-03-01T10:00:00.000Z',
              reviewerRole: 'admin',
              notes: null,
              via: 'review',
            },
          },
        ],
        total: 2,
      }),
    );
    expect(html).toContain('<h3>Decision 1: <span class="time">2026-03-02 09:04 UTC</span></h3>');
    const out = plain(html);
    expect(out).toContain('<h3>Decision 1: 2026-03-02 09:04 UTC</h3>');
    expect(out).toContain('<strong>Refused (blocked).</strong>');
    expect(out).toContain('The system’s confidence: 85%.');
    expect(out).toContain(
      'The rule “Cards”: The output contained a payment-card number. Under this rule such a decision is refused.',
    );
    expect(out).toContain('were erased on 2026-03-04 00:00 UTC at your request');
    expect(out).toContain('Refused (details erased)');
    expect(out).toContain(
      'A person with the role “admin” in the organization reviewed it on 2026-03-01 10:00 UTC',
    );
    expect(out).toContain('No person reviewed this decision before it took effect.');
    expect(out).toContain('<p class="contact">appeals@acme.example</p>');
    expect(out).toContain('What it is for: “Pre-screens loans”.');
  });
});
