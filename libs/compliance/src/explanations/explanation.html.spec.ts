import { describe, expect, it } from 'vitest';
import type { TraceExplanationDto } from './dto/trace-explanation.dto.js';
import { explanationFooter, explanationHtml } from './explanation.html.js';

const BASE: TraceExplanationDto = {
  traceId: '66a000000000000000000001',
  agent: { id: '66a000000000000000000002', name: 'Loan assistant', description: null },
  decision: { status: 'approved', confidence: 0.9, madeAt: '2026-03-02T09:04:00.000Z' },
  policies: [],
  humanReview: null,
  autoApprovedBy: null,
  corrections: [],
  contact: null,
  erasedAt: null,
};
const html = (over: Partial<TraceExplanationDto>, organizationName = 'Acme Lending') =>
  explanationHtml({ explanation: { ...BASE, ...over }, organizationName, generatedAt: new Date(0) });

describe('the explanation’s document', () => {
  it('escapes what the organization wrote', () => {
    const out = html(
      {
        agent: { id: 'a', name: '<b>Bot</b>', description: 'a & b' },
        contact: '<script>x</script>',
        policies: [
          {
            policyId: 'p',
            name: '<i>Rule</i>',
            outcome: 'flag',
            explanation: 'The request contained “<x>”.',
          },
        ],
      },
      'A <Corp>',
    );
    expect(out).not.toMatch(/<(b|i|script|x|Corp)>/);
    expect(out).toContain('&lt;b&gt;Bot&lt;/b&gt;');
    expect(out).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(
      explanationFooter({ explanation: BASE, organizationName: 'A <Corp>', generatedAt: new Date(0) }),
    ).toContain('A &lt;Corp&gt;: explanation of decision 66a000000000000000000001');
  });

  it('says each outcome in words, and who to contest with or that nobody was named', () => {
    expect(html({ decision: { ...BASE.decision, status: 'flagged' } })).toContain(
      'Outcome: Held for a person to review.',
    );
    expect(html({ decision: { ...BASE.decision, status: 'flagged' } })).toContain(
      'The decision is waiting for a person to review it.',
    );
    expect(html({})).toContain('Acme Lending has not named a contact for contesting decisions.');
    expect(html({})).toContain('The organization has not recorded a purpose for this system.');
    expect(html({ contact: 'appeals@acme.example' })).toContain(
      '<p class="contact">appeals@acme.example</p>',
    );
    expect(html({ agent: { id: 'a', name: null, description: null } })).toContain(
      'an AI system the organization has since removed',
    );
  });

  it('tells a review, an automatic approval, a correction and an erasure apart', () => {
    expect(
      html({
        humanReview: {
          decision: 'rejected',
          decidedAt: '2026-03-02T10:00:00.000Z',
          reviewerRole: 'admin',
          notes: 'Income too low',
          via: 'review',
        },
      }),
    ).toContain(
      'A person with the role “admin” in the organization reviewed it on 2026-03-02 10:00 UTC and rejected the ' +
        'decision.</p><p>The reason they gave: “Income too low”</p>',
    );
    expect(html({ autoApprovedBy: '66a000000000000000000009' })).toContain('It was approved automatically');
    const corrected = html({
      decision: { ...BASE.decision, status: 'success' },
      corrections: [
        {
          action: 'correct',
          at: '2026-03-03T10:00:00.000Z',
          originalDecision: 'deny',
          correctedDecision: 'approve',
          originalConfidence: 0.9,
          correctedConfidence: null,
          notes: null,
        },
      ],
    });
    expect(corrected).toContain('Outcome: Corrected by a person after the decision');
    expect(corrected).toContain(
      'On 2026-03-03 10:00 UTC a person corrected the decision. It was “deny”; it is now “approve”.',
    );
    expect(html({ erasedAt: '2026-03-04T00:00:00.000Z' })).toContain('were erased on 2026-03-04 00:00 UTC');
  });
});
