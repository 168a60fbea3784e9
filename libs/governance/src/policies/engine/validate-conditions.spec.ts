import { describe, expect, it } from 'vitest';
import { InvalidPolicyError, OPERATORS } from './condition.js';
import { compile, validateConditions } from './validate-conditions.js';

const fieldsOf = (conditions: unknown): string[] => validateConditions(conditions).map((e) => e.field);

describe('validateConditions', () => {
  it('accepts one valid condition of every operator', () => {
    const valid = [
      { field: 'outputDecision.text', operator: 'equals', value: 'ok' },
      { field: 'outputDecision.action', operator: 'not_equals', value: 'tool_call' },
      { field: 'inputContext.prompt', operator: 'contains', value: 'password' },
      { field: 'inputContext.systemPrompt', operator: 'not_contains', value: 'x' },
      { field: 'outputDecision.text', operator: 'matches', value: '\\d{3}-\\d{2}-\\d{4}' },
      { field: 'agentId', operator: 'in', value: ['a', 'b'] },
      { field: 'toolCalls.name', operator: 'not_in', value: ['search'] },
      { field: 'confidence', operator: 'gt', value: 0.2 },
      { field: 'confidence', operator: 'gte', value: 0 },
      { field: 'metadata.score', operator: 'lt', value: 10 },
      { field: 'metadata.a.b.c', operator: 'lte', value: -1.5 },
      { field: 'metadata.user-id', operator: 'exists' },
      { field: 'metadata.flag', operator: 'not_exists', value: true },
      { field: 'outputDecision.text', operator: 'containsPii', value: ['iban', 'creditCard'], minScore: 0.8 },
    ];
    expect(valid.map((c) => c.operator).sort()).toEqual([...OPERATORS].sort());
    expect(validateConditions(valid)).toEqual([]);
  });

  it('accepts number and boolean equals on metadata and a number on confidence', () => {
    expect(
      validateConditions([
        { field: 'metadata.retries', operator: 'equals', value: 3 },
        { field: 'metadata.internal', operator: 'not_equals', value: false },
        { field: 'confidence', operator: 'equals', value: 0.5 },
        { field: 'metadata.tier', operator: 'in', value: ['gold', 1] },
      ]),
    ).toEqual([]);
  });

  it('refuses a non-array, an empty array and more than 20 conditions at "conditions"', () => {
    const one = { field: 'confidence', operator: 'lt', value: 0.5 };
    expect(validateConditions({})).toEqual([{ field: 'conditions', message: 'must be an array' }]);
    expect(fieldsOf([])).toEqual(['conditions']);
    expect(fieldsOf(Array.from({ length: 20 }, () => one))).toEqual([]);
    expect(validateConditions(Array.from({ length: 21 }, () => one))).toEqual([
      { field: 'conditions', message: 'must contain at most 20 conditions' },
    ]);
  });

  it('refuses a condition that is not an object, or has an unknown property', () => {
    expect(fieldsOf([null, 'x'])).toEqual(['conditions[0]', 'conditions[1]']);
    const errors = validateConditions([
      { field: 'confidence', operator: 'lt', value: 1, caseSensitive: true },
    ]);
    expect(errors).toEqual([{ field: 'conditions[0]', message: 'unknown property "caseSensitive"' }]);
  });

  it('refuses an unknown field and a malformed metadata path at conditions[i].field', () => {
    const bad = (field: unknown) => [{ field, operator: 'exists' }];
    expect(fieldsOf(bad('outputDecision.rationale'))).toEqual(['conditions[0].field']);
    expect(fieldsOf(bad(42))).toEqual(['conditions[0].field']);
    expect(fieldsOf(bad('metadata'))).toEqual(['conditions[0].field']);
    expect(fieldsOf(bad('metadata.'))).toEqual(['conditions[0].field']);
    expect(fieldsOf(bad('metadata.a..b'))).toEqual(['conditions[0].field']);
    expect(fieldsOf(bad('metadata.a b'))).toEqual(['conditions[0].field']);
    expect(fieldsOf(bad('metadata.a[0]'))).toEqual(['conditions[0].field']);
    expect(fieldsOf(bad(`metadata.${Array(8).fill('a').join('.')}`))).toEqual([]);
    expect(fieldsOf(bad(`metadata.${Array(9).fill('a').join('.')}`))).toEqual(['conditions[0].field']);
    expect(fieldsOf(bad(`metadata.${'a'.repeat(191)}`))).toEqual([]); // 200 characters in all
    expect(fieldsOf(bad(`metadata.${'a'.repeat(192)}`))).toEqual(['conditions[0].field']);
  });

  it('refuses an unknown operator at conditions[i].operator', () => {
    expect(fieldsOf([{ field: 'agentId', operator: 'startsWith', value: 'a' }])).toEqual([
      'conditions[0].operator',
    ]);
    expect(fieldsOf([{ field: 'agentId', value: 'a' }])).toEqual(['conditions[0].operator']);
  });

  it('refuses operators that do not apply to the field type', () => {
    expect(fieldsOf([{ field: 'outputDecision.text', operator: 'gt', value: 1 }])).toEqual([
      'conditions[0].operator',
    ]);
    expect(fieldsOf([{ field: 'confidence', operator: 'contains', value: '0.5' }])).toEqual([
      'conditions[0].operator',
    ]);
    expect(fieldsOf([{ field: 'confidence', operator: 'matches', value: '0' }])).toEqual([
      'conditions[0].operator',
    ]);
  });

  it('refuses non-finite or non-numeric values for numeric operators', () => {
    for (const value of ['0.5', null, undefined, Number.NaN, Number.POSITIVE_INFINITY, [1]]) {
      expect(fieldsOf([{ field: 'confidence', operator: 'lt', value }])).toEqual(['conditions[0].value']);
    }
  });

  it('refuses wrongly typed equals and contains values', () => {
    expect(fieldsOf([{ field: 'agentId', operator: 'equals', value: 5 }])).toEqual(['conditions[0].value']);
    expect(fieldsOf([{ field: 'agentId', operator: 'equals', value: true }])).toEqual([
      'conditions[0].value',
    ]);
    expect(fieldsOf([{ field: 'confidence', operator: 'equals', value: '0.5' }])).toEqual([
      'conditions[0].value',
    ]);
    expect(fieldsOf([{ field: 'metadata.x', operator: 'equals', value: { a: 1 } }])).toEqual([
      'conditions[0].value',
    ]);
    expect(fieldsOf([{ field: 'metadata.x', operator: 'equals', value: null }])).toEqual([
      'conditions[0].value',
    ]);
    expect(fieldsOf([{ field: 'outputDecision.text', operator: 'contains', value: 1 }])).toEqual([
      'conditions[0].value',
    ]);
    expect(fieldsOf([{ field: 'outputDecision.text', operator: 'not_contains', value: '' }])).toEqual([
      'conditions[0].value',
    ]);
  });

  it('refuses in/not_in lists that are empty, too long or hold wrong types, naming the element', () => {
    const cond = (field: string, value: unknown) => [{ field, operator: 'in', value }];
    expect(fieldsOf(cond('agentId', []))).toEqual(['conditions[0].value']);
    expect(fieldsOf(cond('agentId', 'a'))).toEqual(['conditions[0].value']);
    expect(
      fieldsOf(
        cond(
          'agentId',
          Array.from({ length: 100 }, (_, i) => `a${i}`),
        ),
      ),
    ).toEqual([]);
    expect(
      fieldsOf(
        cond(
          'agentId',
          Array.from({ length: 101 }, (_, i) => `a${i}`),
        ),
      ),
    ).toEqual(['conditions[0].value']);
    expect(fieldsOf(cond('agentId', ['a', 2]))).toEqual(['conditions[0].value[1]']);
    expect(fieldsOf(cond('confidence', [0.1, '0.2']))).toEqual(['conditions[0].value[1]']);
    expect(fieldsOf(cond('metadata.t', ['a', 1, true, null]))).toEqual([
      'conditions[0].value[2]',
      'conditions[0].value[3]',
    ]);
  });

  it('refuses exists/not_exists with a value other than true', () => {
    expect(fieldsOf([{ field: 'metadata.x', operator: 'exists', value: false }])).toEqual([
      'conditions[0].value',
    ]);
    expect(fieldsOf([{ field: 'metadata.x', operator: 'not_exists', value: 'yes' }])).toEqual([
      'conditions[0].value',
    ]);
  });

  it('refuses containsPii with no types, an unknown or repeated type, a bad minScore, or on confidence', () => {
    const pii = (value: unknown, extra: Record<string, unknown> = {}) =>
      fieldsOf([{ field: 'outputDecision.text', operator: 'containsPii', value, ...extra }]);
    expect(pii([])).toEqual(['conditions[0].value']);
    expect(pii('iban')).toEqual(['conditions[0].value']);
    expect(pii(['iban', 'passport'])).toEqual(['conditions[0].value[1]']);
    expect(pii(['iban', 'iban'])).toEqual(['conditions[0].value[1]']);
    expect(pii(['iban'], { minScore: 1.5 })).toEqual(['conditions[0].minScore']);
    expect(pii(['iban'], { minScore: '0.5' })).toEqual(['conditions[0].minScore']);
    expect(pii(['iban'], { minScore: 0 })).toEqual([]);
    expect(fieldsOf([{ field: 'confidence', operator: 'containsPii', value: ['iban'] }])).toEqual([
      'conditions[0].operator',
    ]);
    // minScore belongs to containsPii alone.
    expect(
      fieldsOf([{ field: 'outputDecision.text', operator: 'contains', value: 'x', minScore: 0.5 }]),
    ).toEqual(['conditions[0].minScore']);
  });

  it('refuses bad patterns: syntax, unsupported Perl syntax, empty, over 512 characters, too complex', () => {
    const m = (value: unknown) =>
      validateConditions([{ field: 'outputDecision.text', operator: 'matches', value }]);
    expect(m('(a')[0]).toMatchObject({
      field: 'conditions[0].value',
      message: expect.stringContaining('missing'),
    });
    expect(m('(?=lookahead)')).toHaveLength(1);
    expect(m('(a)\\1')).toHaveLength(1); // backreferences are not RE2
    expect(m('')).toHaveLength(1);
    expect(m(42)).toHaveLength(1);
    expect(m('a'.repeat(512))).toEqual([]);
    expect(m('a'.repeat(513))[0]!.message).toBe('pattern must be at most 512 characters');
    expect(m('(?:a?){1000}a{1000}')[0]!.message).toContain('too complex');
  });

  it('reports every bad condition with its own index', () => {
    const errors = validateConditions([
      { field: 'confidence', operator: 'lt', value: 0.5 },
      { field: 'nope', operator: 'exists' },
      { field: 'agentId', operator: 'in', value: [] },
    ]);
    expect(errors.map((e) => e.field)).toEqual(['conditions[1].field', 'conditions[2].value']);
  });
});

describe('compile', () => {
  const base = { id: 'p1', name: 'P', outcome: 'block' as const };

  it('fills the defaults: match all, every agent, priority 100, active', () => {
    const compiled = compile({ ...base, conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }] });
    expect(compiled).toMatchObject({ match: 'all', agentIds: null, priority: 100, isActive: true });
    expect(compiled.conditions).toHaveLength(1);
  });

  it('throws InvalidPolicyError with the validation details', () => {
    const attempt = () =>
      compile({ ...base, conditions: [{ field: 'outputDecision.text', operator: 'matches', value: '(' }] });
    expect(attempt).toThrow(InvalidPolicyError);
    try {
      attempt();
    } catch (err) {
      expect((err as InvalidPolicyError).details[0]!.field).toBe('conditions[0].value');
    }
  });

  it('refuses an unknown outcome or match mode', () => {
    const conditions = [{ field: 'confidence', operator: 'lt', value: 0.5 }] as const;
    expect(() => compile({ ...base, outcome: 'warn' as never, conditions })).toThrow(/outcome/);
    expect(() => compile({ ...base, match: 'some' as never, conditions })).toThrow(/match/);
  });
});
