import { describe, expect, it } from 'vitest';
import { POLICY_TEMPLATES, RETIRED_TEMPLATE_PATTERNS } from '#governance';
import {
  conditionClause,
  conditionsSentence,
  explainPolicyMatch,
  listOf,
  percent,
} from './policy-sentence.js';

const template = (id: string) => POLICY_TEMPLATES.find((t) => t.id === id)!;
const DECIDED = new Date('2026-03-01T12:00:00.000Z');
const RESULT = { policyId: 'p1', name: 'Rule', outcome: 'flag' as const };

describe('conditionClause', () => {
  it('names each template’s pattern by what it looks for, not by its text', () => {
    expect(conditionsSentence(template('email-in-output').conditions, 'all')).toBe(
      'The output contained an e-mail address.',
    );
    expect(conditionsSentence(template('payment-card-in-output').conditions, 'all')).toBe(
      'The output contained a payment-card number.',
    );
    // What the decision's result found, when stored, is what the sentence names.
    expect(conditionsSentence(template('national-id-in-output').conditions, 'all', ['usSsn'])).toBe(
      'The output contained a US Social Security number.',
    );
    expect(conditionsSentence(template('national-id-in-output').conditions, 'all')).toMatch(
      /^The output contained a US Social Security number, a UK National Insurance number, .* or a Polish PESEL number\.$/,
    );
    expect(conditionsSentence(template('bank-account-in-output').conditions, 'all')).toBe(
      'The output contained a bank account number (IBAN).',
    );
    // Policies made from the templates before they used containsPii keep their patterns, which still read so.
    for (const [id, meaning] of [
      ['email-in-output', 'an e-mail address'],
      ['payment-card-in-output', 'a payment-card number'],
      ['national-id-in-output', 'a US Social Security number'],
    ] as const) {
      const [pattern] = RETIRED_TEMPLATE_PATTERNS[id]!;
      expect(
        conditionsSentence([{ field: 'outputDecision.text', operator: 'matches', value: pattern! }], 'all'),
      ).toBe(`The output contained ${meaning}.`);
    }
    expect(conditionsSentence(template('secret-in-output').conditions, 'all')).toBe(
      'The output contained a password, key or other secret credential.',
    );
    expect(conditionsSentence(template('low-confidence').conditions, 'all')).toBe(
      'The system’s confidence in its decision was below 50%.',
    );
    expect(conditionsSentence(template('destructive-tool-call').conditions, 'all')).toBe(
      'The name of a tool the system used contained a word for a destructive action (such as delete, drop or ' +
        'shutdown).',
    );
    expect(conditionsSentence(template('prompt-injection').conditions, 'all')).toBe(
      'The request contained a phrase trying to override the system’s instructions (such as “ignore previous ' +
        'instructions”).',
    );
  });

  it('says every operator in words, with confidence as a percentage', () => {
    const clause = (field: string, operator: string, value?: unknown) =>
      conditionClause({ field, operator, value } as never);
    expect(clause('inputContext.prompt', 'contains', 'refund')).toBe('the request contained “refund”');
    expect(clause('outputDecision.text', 'not_contains', 'sorry')).toBe('the output did not contain “sorry”');
    expect(clause('outputDecision.action', 'equals', 'deny_loan')).toBe('the action decided was “deny_loan”');
    expect(clause('outputDecision.action', 'not_equals', 'approve')).toBe(
      'the action decided was not “approve”',
    );
    expect(clause('outputDecision.action', 'in', ['deny', 'refer'])).toBe(
      'the action decided was one of “deny”, “refer”',
    );
    expect(clause('outputDecision.action', 'not_in', ['approve'])).toBe(
      'the action decided was none of “approve”',
    );
    expect(clause('confidence', 'lt', 0.7)).toBe('the system’s confidence in its decision was below 70%');
    expect(clause('confidence', 'lte', 0.725)).toBe(
      'the system’s confidence in its decision was 72.5% or less',
    );
    expect(clause('confidence', 'gt', 0.9)).toBe('the system’s confidence in its decision was above 90%');
    expect(clause('confidence', 'gte', 0.95)).toBe('the system’s confidence in its decision was 95% or more');
    expect(clause('metadata.amount', 'gt', 10000)).toBe('the recorded detail “amount” was above 10000');
    expect(clause('metadata.customer.vip', 'equals', true)).toBe(
      'the recorded detail “customer.vip” was true',
    );
    expect(clause('metadata.region', 'exists')).toBe('the recorded detail “region” was present');
    expect(clause('inputContext.systemPrompt', 'not_exists')).toBe(
      'the system prompt (the instructions given to the system) was absent',
    );
    expect(clause('toolCalls.name', 'exists')).toBe('the system used a tool');
    expect(clause('toolCalls.name', 'not_exists')).toBe('the system used no tool');
    expect(clause('agentId', 'in', ['a'])).toBe('the decision was made by an AI system this rule names');
    expect(clause('outputDecision.text', 'matches', '\\bloan\\b')).toBe(
      'the output matched a text pattern set by the organization (“\\bloan\\b”)',
    );
  });

  it('names the kinds of personal data, preferring those the match found', () => {
    const pii = { field: 'outputDecision.text', operator: 'containsPii', value: ['email', 'iban'] } as never;
    expect(conditionClause(pii)).toBe(
      'the output contained an e-mail address or a bank account number (IBAN)',
    );
    expect(conditionClause(pii, ['iban'])).toBe('the output contained a bank account number (IBAN)');
  });

  it('shortens a long value', () => {
    const long = 'x'.repeat(200);
    expect(conditionClause({ field: 'inputContext.prompt', operator: 'contains', value: long })).toBe(
      `the request contained “${'x'.repeat(120)}…”`,
    );
  });
});

describe('conditionsSentence', () => {
  const a = { field: 'inputContext.prompt', operator: 'contains', value: 'refund' } as const;
  const b = { field: 'confidence', operator: 'lt', value: 0.7 } as const;
  it('joins an all policy’s conditions with and', () => {
    expect(conditionsSentence([a, b], 'all')).toBe(
      'The request contained “refund” and the system’s confidence in its decision was below 70%.',
    );
  });
  it('says that at least one of an any policy’s conditions held', () => {
    expect(conditionsSentence([a, b], 'any')).toBe(
      'At least one of these was true: the request contained “refund”; the system’s confidence in its decision ' +
        'was below 70%.',
    );
  });
});

describe('explainPolicyMatch', () => {
  const policy = { conditions: template('email-in-output').conditions, match: 'all' as const };
  it('explains from the conditions when the policy was not edited after the decision', () => {
    expect(
      explainPolicyMatch({ result: RESULT, policy: { ...policy, updatedAt: DECIDED }, decidedAt: DECIDED }),
    ).toBe('The output contained an e-mail address.');
  });
  it('says so when the policy was edited after the decision', () => {
    const updatedAt = new Date(DECIDED.getTime() + 1);
    expect(explainPolicyMatch({ result: RESULT, policy: { ...policy, updatedAt }, decidedAt: DECIDED })).toBe(
      'The output contained an e-mail address. (The organization edited this rule after the decision: these are ' +
        'its conditions now, which may differ from those applied then.)',
    );
  });
  it('says that a deleted policy’s conditions can no longer be shown', () => {
    expect(explainPolicyMatch({ result: RESULT, decidedAt: DECIDED })).toBe(
      'The organization has since deleted this rule, so its conditions can no longer be shown.',
    );
  });
});

describe('helpers', () => {
  it('lists and formats', () => {
    expect(listOf(['a'], 'or')).toBe('a');
    expect(listOf(['a', 'b', 'c'], 'and')).toBe('a, b and c');
    expect(percent(0.5)).toBe('50%');
    expect(percent(0.333)).toBe('33.3%');
  });
});
