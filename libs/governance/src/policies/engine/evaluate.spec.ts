import { describe, expect, it } from 'vitest';
import type { PolicyCondition, PolicyInput, TraceFacts } from './condition.js';
import { evaluate } from './evaluate.js';
import { compile } from './validate-conditions.js';

const baseTrace: TraceFacts = {
  agentId: 'agent-1',
  confidence: 0.8,
  inputContext: { prompt: 'What is the refund policy?', systemPrompt: 'You are a support bot.' },
  outputDecision: {
    action: 'llm_response',
    text: 'Refunds are accepted within 30 days.',
    toolCalls: [{ name: 'search_docs', arguments: { q: 'refund' } }, { name: 'get_order' }],
  },
  metadata: {
    channel: 'web',
    retries: 2,
    internal: false,
    score: '7',
    user: { tier: 'gold', region: { code: 'EU' } },
    tags: ['vip', 'beta'],
    items: [{ sku: 'A1', qty: 3 }, { sku: 'B2' }],
    nothing: null,
  },
};

const trace = (over: Partial<TraceFacts> = {}): TraceFacts => ({ ...baseTrace, ...over });

let seq = 0;
const policy = (conditions: PolicyCondition[], over: Partial<PolicyInput> = {}) =>
  compile({ id: `p${++seq}`, name: 'test', outcome: 'flag', conditions, ...over });

/** Whether a one-condition policy matches the trace. */
const holds = (condition: PolicyCondition, t: TraceFacts = baseTrace): boolean =>
  evaluate([policy([condition])], t).status === 'flagged';

describe('operators on text fields (exact, case-sensitive equality; case-insensitive contains and matches)', () => {
  it('equals / not_equals compare exactly, case included', () => {
    expect(holds({ field: 'outputDecision.action', operator: 'equals', value: 'llm_response' })).toBe(true);
    expect(holds({ field: 'outputDecision.action', operator: 'equals', value: 'LLM_RESPONSE' })).toBe(false);
    expect(holds({ field: 'outputDecision.action', operator: 'not_equals', value: 'LLM_RESPONSE' })).toBe(
      true,
    );
    expect(holds({ field: 'outputDecision.action', operator: 'not_equals', value: 'llm_response' })).toBe(
      false,
    );
    expect(holds({ field: 'agentId', operator: 'equals', value: 'agent-1' })).toBe(true);
    expect(
      holds({ field: 'inputContext.systemPrompt', operator: 'equals', value: 'You are a support bot.' }),
    ).toBe(true);
  });

  it('contains / not_contains ignore case', () => {
    expect(holds({ field: 'outputDecision.text', operator: 'contains', value: 'REFUNDS' })).toBe(true);
    expect(holds({ field: 'inputContext.prompt', operator: 'contains', value: 'refund POLICY' })).toBe(true);
    expect(holds({ field: 'inputContext.prompt', operator: 'contains', value: 'password' })).toBe(false);
    expect(holds({ field: 'inputContext.prompt', operator: 'not_contains', value: 'password' })).toBe(true);
    expect(holds({ field: 'inputContext.prompt', operator: 'not_contains', value: 'REFUND' })).toBe(false);
  });

  it('matches runs RE2 unanchored and case-insensitive', () => {
    expect(holds({ field: 'outputDecision.text', operator: 'matches', value: 'within \\d+ DAYS' })).toBe(
      true,
    );
    expect(holds({ field: 'outputDecision.text', operator: 'matches', value: '^within' })).toBe(false);
    expect(
      holds({ field: 'inputContext.systemPrompt', operator: 'matches', value: 'support (bot|agent)' }),
    ).toBe(true);
  });

  it('in / not_in are exact membership', () => {
    expect(holds({ field: 'agentId', operator: 'in', value: ['agent-1', 'agent-2'] })).toBe(true);
    expect(holds({ field: 'agentId', operator: 'in', value: ['AGENT-1'] })).toBe(false);
    expect(holds({ field: 'agentId', operator: 'not_in', value: ['agent-2'] })).toBe(true);
    expect(holds({ field: 'agentId', operator: 'not_in', value: ['agent-1'] })).toBe(false);
  });

  it('exists / not_exists follow presence; an empty string is present', () => {
    expect(holds({ field: 'inputContext.systemPrompt', operator: 'exists' })).toBe(true);
    const noSystem = trace({ inputContext: { prompt: 'hi' } });
    expect(holds({ field: 'inputContext.systemPrompt', operator: 'exists' }, noSystem)).toBe(false);
    expect(holds({ field: 'inputContext.systemPrompt', operator: 'not_exists', value: true }, noSystem)).toBe(
      true,
    );
    const empty = trace({ inputContext: { prompt: 'hi', systemPrompt: '' } });
    expect(holds({ field: 'inputContext.systemPrompt', operator: 'exists' }, empty)).toBe(true);
  });

  it('every other operator is false on a missing field, not_contains and not_equals included', () => {
    const noSystem = trace({ inputContext: { prompt: 'hi', systemPrompt: null } });
    for (const c of [
      { operator: 'not_contains', value: 'secret' },
      { operator: 'not_equals', value: 'x' },
      { operator: 'not_in', value: ['x'] },
      { operator: 'matches', value: '.*' },
    ] as const) {
      expect(holds({ field: 'inputContext.systemPrompt', ...c }, noSystem)).toBe(false);
    }
  });
});

describe('confidence (numbers)', () => {
  it('compares numerically', () => {
    expect(holds({ field: 'confidence', operator: 'gt', value: 0.79 })).toBe(true);
    expect(holds({ field: 'confidence', operator: 'gt', value: 0.8 })).toBe(false);
    expect(holds({ field: 'confidence', operator: 'gte', value: 0.8 })).toBe(true);
    expect(holds({ field: 'confidence', operator: 'lt', value: 0.8 })).toBe(false);
    expect(holds({ field: 'confidence', operator: 'lte', value: 0.8 })).toBe(true);
    expect(holds({ field: 'confidence', operator: 'equals', value: 0.8 })).toBe(true);
    expect(holds({ field: 'confidence', operator: 'not_equals', value: 0.8 })).toBe(false);
    expect(holds({ field: 'confidence', operator: 'in', value: [0.5, 0.8] })).toBe(true);
    expect(holds({ field: 'confidence', operator: 'not_in', value: [0.5] })).toBe(true);
  });
});

describe('toolCalls.name (any tool call)', () => {
  it('positive operators hold when any tool call satisfies them', () => {
    expect(holds({ field: 'toolCalls.name', operator: 'equals', value: 'get_order' })).toBe(true);
    expect(holds({ field: 'toolCalls.name', operator: 'contains', value: 'SEARCH' })).toBe(true);
    expect(holds({ field: 'toolCalls.name', operator: 'matches', value: '^get_' })).toBe(true);
    expect(holds({ field: 'toolCalls.name', operator: 'in', value: ['delete_user', 'search_docs'] })).toBe(
      true,
    );
    expect(holds({ field: 'toolCalls.name', operator: 'in', value: ['delete_user'] })).toBe(false);
  });

  it('not_* operators hold only when no tool call satisfies the positive one', () => {
    expect(holds({ field: 'toolCalls.name', operator: 'not_equals', value: 'get_order' })).toBe(false);
    expect(holds({ field: 'toolCalls.name', operator: 'not_equals', value: 'delete_user' })).toBe(true);
    expect(holds({ field: 'toolCalls.name', operator: 'not_contains', value: 'search' })).toBe(false);
    expect(holds({ field: 'toolCalls.name', operator: 'not_in', value: ['delete_user'] })).toBe(true);
    expect(holds({ field: 'toolCalls.name', operator: 'not_in', value: ['get_order'] })).toBe(false);
  });

  it('no tool calls (absent or empty) reads as a missing field', () => {
    for (const toolCalls of [undefined, []]) {
      const t = trace({ outputDecision: { action: 'llm_response', text: 'x', toolCalls } });
      expect(holds({ field: 'toolCalls.name', operator: 'exists' }, t)).toBe(false);
      expect(holds({ field: 'toolCalls.name', operator: 'not_exists' }, t)).toBe(true);
      expect(holds({ field: 'toolCalls.name', operator: 'not_in', value: ['rm'] }, t)).toBe(false);
    }
  });
});

describe('metadata.<path>', () => {
  it('reads top-level and nested object paths', () => {
    expect(holds({ field: 'metadata.channel', operator: 'equals', value: 'web' })).toBe(true);
    expect(holds({ field: 'metadata.user.tier', operator: 'in', value: ['gold', 'platinum'] })).toBe(true);
    expect(holds({ field: 'metadata.user.region.code', operator: 'matches', value: '^eu$' })).toBe(true);
    expect(holds({ field: 'metadata.user.region', operator: 'exists' })).toBe(true);
    expect(holds({ field: 'metadata.user.region.city', operator: 'not_exists' })).toBe(true);
  });

  it('compares numbers and booleans by type, with no coercion from strings', () => {
    expect(holds({ field: 'metadata.retries', operator: 'equals', value: 2 })).toBe(true);
    expect(holds({ field: 'metadata.retries', operator: 'equals', value: '2' })).toBe(false);
    expect(holds({ field: 'metadata.retries', operator: 'gte', value: 2 })).toBe(true);
    expect(holds({ field: 'metadata.score', operator: 'gt', value: 5 })).toBe(false); // "7" is a string
    expect(holds({ field: 'metadata.score', operator: 'equals', value: '7' })).toBe(true);
    expect(holds({ field: 'metadata.score', operator: 'in', value: [7] })).toBe(false);
    expect(holds({ field: 'metadata.internal', operator: 'equals', value: false })).toBe(true);
    expect(holds({ field: 'metadata.retries', operator: 'contains', value: '2' })).toBe(false);
    expect(holds({ field: 'metadata.retries', operator: 'not_contains', value: '2' })).toBe(true);
  });

  it('treats an array value as any-element and reads array elements by index', () => {
    expect(holds({ field: 'metadata.tags', operator: 'equals', value: 'beta' })).toBe(true);
    expect(holds({ field: 'metadata.tags', operator: 'contains', value: 'VI' })).toBe(true);
    expect(holds({ field: 'metadata.tags', operator: 'not_in', value: ['vip'] })).toBe(false);
    expect(holds({ field: 'metadata.tags', operator: 'not_in', value: ['alpha'] })).toBe(true);
    expect(holds({ field: 'metadata.tags.1', operator: 'equals', value: 'beta' })).toBe(true);
    expect(holds({ field: 'metadata.items.0.qty', operator: 'gt', value: 2 })).toBe(true);
    expect(holds({ field: 'metadata.items.1.qty', operator: 'exists' })).toBe(false);
    expect(holds({ field: 'metadata.items.5.sku', operator: 'exists' })).toBe(false);
    expect(holds({ field: 'metadata.items.sku', operator: 'exists' })).toBe(false); // no implicit fan-out
    expect(holds({ field: 'metadata.tags.length', operator: 'exists' })).toBe(false);
  });

  it('treats null, absent metadata and prototype names as missing', () => {
    expect(holds({ field: 'metadata.nothing', operator: 'exists' })).toBe(false);
    expect(holds({ field: 'metadata.nothing', operator: 'not_exists' })).toBe(true);
    expect(
      holds({ field: 'metadata.channel', operator: 'not_equals', value: 'x' }, trace({ metadata: null })),
    ).toBe(false);
    expect(holds({ field: 'metadata.constructor', operator: 'exists' })).toBe(false);
    expect(holds({ field: 'metadata.__proto__', operator: 'exists' })).toBe(false);
    expect(holds({ field: 'metadata.channel.toString', operator: 'exists' })).toBe(false);
  });
});

describe('evaluate', () => {
  const lowConfidence: PolicyCondition = { field: 'confidence', operator: 'lt', value: 0.9 };
  const never: PolicyCondition = { field: 'agentId', operator: 'equals', value: 'nobody' };

  it('approves with no policies and with no matching policy', () => {
    expect(evaluate([], baseTrace)).toEqual({ status: 'approved', policyResults: [], results: [] });
    const result = evaluate([policy([never], { id: 'n', name: 'never' })], baseTrace);
    expect(result.status).toBe('approved');
    expect(result.results).toEqual([{ policyId: 'n', name: 'never', outcome: 'flag', matched: false }]);
  });

  it('blocks when a block policy matches, even if a flag policy matches first', () => {
    const flag = policy([lowConfidence], { id: 'f', name: 'flag', priority: 1 });
    const block = policy([lowConfidence], { id: 'b', name: 'block', outcome: 'block', priority: 50 });
    const result = evaluate([block, flag], baseTrace);
    expect(result.status).toBe('blocked');
    expect(result.policyResults).toEqual([
      { policyId: 'f', name: 'flag', outcome: 'flag' },
      { policyId: 'b', name: 'block', outcome: 'block' },
    ]);
  });

  it('flags when only flag policies match', () => {
    const block = policy([never], { outcome: 'block' });
    expect(evaluate([block, policy([lowConfidence])], baseTrace).status).toBe('flagged');
  });

  it('orders results by priority ascending, then by id', () => {
    const ps = [
      policy([lowConfidence], { id: 'c', priority: 100 }),
      policy([lowConfidence], { id: 'a', priority: 100 }),
      policy([never], { id: 'z', priority: 5 }),
      policy([lowConfidence], { id: 'b', priority: -1 }),
    ];
    const result = evaluate(ps, baseTrace);
    expect(result.results.map((r) => r.policyId)).toEqual(['b', 'z', 'a', 'c']);
    expect(result.policyResults.map((r) => r.policyId)).toEqual(['b', 'a', 'c']);
  });

  it('skips inactive policies entirely', () => {
    const result = evaluate([policy([lowConfidence], { outcome: 'block', isActive: false })], baseTrace);
    expect(result).toEqual({ status: 'approved', policyResults: [], results: [] });
  });

  it('applies a policy with agentIds only to those agents', () => {
    const scoped = policy([lowConfidence], { outcome: 'block', agentIds: ['agent-2', 'agent-3'] });
    expect(evaluate([scoped], baseTrace).status).toBe('approved');
    expect(evaluate([scoped], baseTrace).results).toEqual([]);
    expect(evaluate([scoped], trace({ agentId: 'agent-3' })).status).toBe('blocked');
  });

  it('needs every condition under match all and one under match any', () => {
    expect(evaluate([policy([lowConfidence, never], { match: 'all' })], baseTrace).status).toBe('approved');
    expect(evaluate([policy([lowConfidence, never], { match: 'any' })], baseTrace).status).toBe('flagged');
    expect(evaluate([policy([never, never], { match: 'any' })], baseTrace).status).toBe('approved');
  });

  it('reuses a compiled policy across traces', () => {
    const p = policy([{ field: 'inputContext.prompt', operator: 'matches', value: 'refund' }]);
    expect(evaluate([p], baseTrace).status).toBe('flagged');
    expect(evaluate([p], trace({ inputContext: { prompt: 'hello' } })).status).toBe('approved');
    expect(evaluate([p], baseTrace).status).toBe('flagged');
  });

  it('finishes a pathological pattern on a 50,000-character prompt well under a second', () => {
    const prompt = `${'a'.repeat(50_000)}!`;
    const ps = [
      policy([{ field: 'inputContext.prompt', operator: 'matches', value: '(a+)+$' }], { id: 'nested' }),
      policy([{ field: 'inputContext.prompt', operator: 'matches', value: '(a|aa)*b' }], { id: 'alt' }),
      policy([{ field: 'inputContext.prompt', operator: 'contains', value: 'aaab' }], { id: 'contains' }),
    ];
    const started = performance.now();
    const result = evaluate(ps, trace({ inputContext: { prompt } }));
    const elapsed = performance.now() - started;
    expect(result.status).toBe('approved');
    expect(result.results).toHaveLength(3);
    expect(elapsed).toBeLessThan(500);
  });
});

describe('containsPii (validated PII, types on the result)', () => {
  const withText = (text: string) => trace({ outputDecision: { ...baseTrace.outputDecision, text } });

  it('holds on a valid card and not on a Luhn-failing order number of the same shape', () => {
    const card = { field: 'outputDecision.text', operator: 'containsPii', value: ['creditCard'] } as const;
    expect(holds(card, withText('Card 4111 1111 1111 1111 is on file.'))).toBe(true);
    expect(holds(card, withText('Order 4111 1111 1111 1112 ships today.'))).toBe(false);
  });

  it('records the types found, never the values, on the matched policy only', () => {
    const pii = policy(
      [{ field: 'outputDecision.text', operator: 'containsPii', value: ['iban', 'creditCard', 'email'] }],
      { id: 'pii', outcome: 'block' },
    );
    const other = policy([{ field: 'confidence', operator: 'gt', value: 0.5 }], { id: 'other' });
    const result = evaluate(
      [pii, other],
      withText('Pay to DE89 3704 0044 0532 0130 00 with card 4111-1111-1111-1111.'),
    );
    expect(result.status).toBe('blocked');
    expect(result.policyResults).toEqual([
      { policyId: 'other', name: 'test', outcome: 'flag' },
      { policyId: 'pii', name: 'test', outcome: 'block', piiEntities: ['creditCard', 'iban'] },
    ]);
    expect(JSON.stringify(result)).not.toContain('4111');
  });

  it('raises or lowers the bar with minScore: a bare 9-digit BSN needs its context word at the default', () => {
    const bsn = (minScore?: number) =>
      ({
        field: 'outputDecision.text',
        operator: 'containsPii',
        value: ['nlBsn'],
        ...(minScore === undefined ? {} : { minScore }),
      }) as const;
    expect(holds(bsn(), withText('Reference 111222333 closed.'))).toBe(false);
    expect(holds(bsn(), withText('Het BSN is 111222333.'))).toBe(true);
    expect(holds(bsn(0.1), withText('Reference 111222333 closed.'))).toBe(true);
    expect(holds(bsn(1), withText('Het BSN is 111222333.'))).toBe(false);
  });

  it('reads metadata strings and any element of toolCalls.name', () => {
    const t = trace({ metadata: { ...baseTrace.metadata, contact: 'jane@example.com' } });
    expect(holds({ field: 'metadata.contact', operator: 'containsPii', value: ['email'] }, t)).toBe(true);
    expect(holds({ field: 'metadata.retries', operator: 'containsPii', value: ['email'] }, t)).toBe(false);
  });
});
