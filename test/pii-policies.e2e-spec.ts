import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import type { TestAgent } from './support/builders.js';
import { openEventStream, until } from './support/event-stream.js';
import { POLICIES, type PolicyBody } from './support/policies-suite.js';
import { QUEUE } from './support/review-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const OBJECT_ID = /^[0-9a-f]{24}$/;
/** A Visa test number: passes Luhn, issuer prefix 4, 16 digits. */
const CARD = '4111 1111 1111 1111';
/** The same shape with the last digit changed: fails Luhn, as an order number would. */
const ORDER_NUMBER = '4111 1111 1111 1112';
/** The UK example IBAN of ISO 13616 (check digits 82), and an e-mail address planted beside it. */
const IBAN = 'GB82 WEST 1234 5698 7654 32';
const IBAN_COMPACT = 'GB82WEST12345698765432';
const EMAIL = 'refunds-planted@bank.example';
/** The German example IBAN with its last digit changed: the mod-97 check fails. */
const BAD_IBAN = 'DE89370400440532013001';

const piiCondition = (value: unknown, extra: Record<string, unknown> = {}) => ({
  field: 'outputDecision.text',
  operator: 'containsPii',
  value,
  ...extra,
});

/**
 * The `containsPii` policy condition (contract-decisions §19): checksum-validated detectors instead of patterns, the
 * types found (never the values) on the policy result, the review item, the trace's event and its explanation.
 */
describe('containsPii policies', () => {
  let ctx: TestContext;
  let owner: Registered;
  /** Judged by the card policy only. */
  let shop: TestAgent;
  /** Judged by the bank-details policy only. */
  let bank: TestAgent;
  let cardPolicy: PolicyBody;
  let bankPolicy: PolicyBody;
  let base: string;

  const createPolicy = async (body: Record<string, unknown>, token = owner.token): Promise<PolicyBody> => {
    const res = await ctx.post(POLICIES, { token, body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as PolicyBody;
  };
  const ingest = (agent: TestAgent, text: string) =>
    ctx.post(TRACES, { apiKey: agent.key, body: traceBody({}, {}, { text }) });
  const traceOf = async (id: string, token = owner.token) => {
    const res = await ctx.get(`${TRACES}/${id}`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as Record<string, unknown>;
  };
  const policyCount = async (token = owner.token) => {
    const res = await ctx.get(POLICIES, { token, query: { limit: '100' } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().pagination.total as number;
  };

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Card Guards' });
    shop = await ctx.newAgent(owner.organization.id, 'Shop assistant');
    bank = await ctx.newAgent(owner.organization.id, 'Bank assistant');
    cardPolicy = await createPolicy({
      name: 'No cards in answers',
      outcome: 'block',
      agentIds: [shop.id],
      conditions: [piiCondition(['creditCard'])],
    });
    bankPolicy = await createPolicy({
      name: 'Bank details need a human',
      outcome: 'flag',
      agentIds: [bank.id],
      conditions: [piiCondition(['iban', 'email'], { minScore: 0.5 })],
    });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => ctx?.close());

  it('stores the condition as sent, minScore included', () => {
    expect(cardPolicy.conditions).toEqual([piiCondition(['creditCard'])]);
    expect(bankPolicy.conditions).toEqual([piiCondition(['iban', 'email'], { minScore: 0.5 })]);
  });

  it('blocks an output holding a valid card number with 403 SVC_BLOCKED_BY_POLICY, naming creditCard and not the number', async () => {
    const res = await ingest(shop, `The card ${CARD} was charged 40 EUR.`);
    expect(res.statusCode, res.body).toBe(403);
    const body = res.json();
    expect(body).toEqual({
      success: false,
      code: 'SVC_BLOCKED_BY_POLICY',
      error: 'Trace blocked by policy: No cards in answers',
      data: {
        id: expect.stringMatching(OBJECT_ID),
        status: 'blocked',
        confidence: 0.9,
        policies: [
          {
            policyId: cardPolicy.id,
            name: 'No cards in answers',
            outcome: 'block',
            piiEntities: ['creditCard'],
          },
        ],
      },
    });
    const trace = await traceOf(body.data.id);
    expect(trace).toMatchObject({
      status: 'blocked',
      policyResults: [
        {
          policyId: cardPolicy.id,
          name: 'No cards in answers',
          outcome: 'block',
          piiEntities: ['creditCard'],
        },
      ],
      // Masking is off: the content is kept as sent.
      piiMasked: null,
      outputDecision: expect.objectContaining({ text: `The card ${CARD} was charged 40 EUR.` }),
    });
    const [entry] = await auditEntriesOf(ctx, owner.organization.id, 'trace.blocked', body.data.id);
    expect(entry!.metadata).toMatchObject({ policyIds: [cardPolicy.id], piiEntities: ['creditCard'] });
    // The result names the type, never the value.
    expect(JSON.stringify(body)).not.toContain('4111');
    expect(JSON.stringify(entry!.metadata)).not.toContain('4111');
  });

  it('blocks the card written without spaces and with dashes too', async () => {
    for (const written of ['4111111111111111', '4111-1111-1111-1111']) {
      const res = await ingest(shop, `Charged ${written} today.`);
      expect(res.statusCode, `${written}: ${res.body}`).toBe(403);
      expect(res.json().data.policies).toEqual([
        expect.objectContaining({ policyId: cardPolicy.id, piiEntities: ['creditCard'] }),
      ]);
    }
  });

  it('approves a 16-digit order number that fails the Luhn check: 201, no policy matched', async () => {
    for (const text of [
      `Your order number is ${ORDER_NUMBER}.`,
      `Card order ${ORDER_NUMBER.replaceAll(' ', '')} ships tomorrow.`,
      'Tracking 1234 5678 9012 3456 left the warehouse.',
    ]) {
      const res = await ingest(shop, text);
      expect(res.statusCode, `${text}: ${res.body}`).toBe(201);
      expect(res.json().data.status).toBe('approved');
      const trace = await traceOf(res.json().data.id);
      expect(trace).toMatchObject({ status: 'approved', policyResults: [] });
    }
  });

  it('flags IBAN and e-mail: the review item, the event and the explanation name the types found, never the values', async () => {
    const token = await ctx.post('/api/v1/auth/stream-token', { token: owner.token });
    expect(token.statusCode, token.body).toBe(201);
    const stream = openEventStream(base, `token=${token.json().data.token}`);
    let traceId: string;
    let reviewItemId: string;
    let ibanOnlyId: string;
    try {
      await stream.opened;
      const res = await ingest(bank, `Refund sent to ${IBAN}; the receipt goes to ${EMAIL}.`);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({
        code: 'SVC_FLAGGED_FOR_REVIEW',
        data: { status: 'flagged', reviewItemId: expect.stringMatching(OBJECT_ID) },
      });
      traceId = res.json().data.id;
      reviewItemId = res.json().data.reviewItemId;
      // Only the IBAN, written compact: the result names what was found, not every type the policy looks for.
      const ibanOnly = await ingest(bank, `Refund sent to ${IBAN_COMPACT}.`);
      expect(ibanOnly.statusCode, ibanOnly.body).toBe(202);
      ibanOnlyId = ibanOnly.json().data.id;
      await until(
        () => stream.received.filter((e) => e.type === 'trace.flagged').length === 2,
        'both trace.flagged events',
      );
    } finally {
      stream.source.close();
    }
    const events = stream.received.filter((e) => e.type === 'trace.flagged');
    expect(events.map((e) => e.body.data)).toEqual([
      expect.objectContaining({
        traceId,
        status: 'flagged',
        policyIds: [bankPolicy.id],
        reviewItemId,
        piiEntities: ['email', 'iban'],
      }),
      expect.objectContaining({ traceId: ibanOnlyId, policyIds: [bankPolicy.id], piiEntities: ['iban'] }),
    ]);
    const sent = JSON.stringify(stream.received);
    for (const value of [IBAN, IBAN_COMPACT, '12345698765432', EMAIL]) expect(sent).not.toContain(value);

    const stored = await traceOf(traceId);
    expect(stored.policyResults).toEqual([
      {
        policyId: bankPolicy.id,
        name: 'Bank details need a human',
        outcome: 'flag',
        piiEntities: ['email', 'iban'],
      },
    ]);

    const queue = await ctx.get(QUEUE, { token: owner.token, query: { agentId: bank.id, limit: '100' } });
    expect(queue.statusCode, queue.body).toBe(200);
    const item = (queue.json().data as Record<string, unknown>[]).find((i) => i.id === reviewItemId);
    expect(item).toMatchObject({
      traceId,
      status: 'pending',
      matchedPolicies: [
        {
          policyId: bankPolicy.id,
          name: 'Bank details need a human',
          outcome: 'flag',
          piiEntities: ['email', 'iban'],
        },
      ],
    });

    const explanation = await ctx.get(`${TRACES}/${traceId}/explanation`, { token: owner.token });
    expect(explanation.statusCode, explanation.body).toBe(200);
    expect(explanation.json().data.policies).toEqual([
      {
        policyId: bankPolicy.id,
        name: 'Bank details need a human',
        outcome: 'flag',
        explanation: 'The output contained an e-mail address and a bank account number (IBAN).',
      },
    ]);
    expect(explanation.body).not.toContain(IBAN);
    expect(explanation.body).not.toContain(EMAIL);
    const ibanOnlyExplanation = await ctx.get(`${TRACES}/${ibanOnlyId}/explanation`, { token: owner.token });
    expect(ibanOnlyExplanation.statusCode, ibanOnlyExplanation.body).toBe(200);
    expect(ibanOnlyExplanation.json().data.policies[0].explanation).toBe(
      'The output contained a bank account number (IBAN).',
    );
  });

  it('approves an IBAN-shaped string whose check digits are wrong', async () => {
    const res = await ingest(bank, `Refund sent to ${BAD_IBAN}.`);
    expect(res.statusCode, res.body).toBe(201);
    expect((await traceOf(res.json().data.id)).policyResults).toEqual([]);
  });

  it('honours minScore: a bare card number scores under 0.9, the same number labelled as a card above it', async () => {
    const strict = await ctx.newAgent(owner.organization.id, 'Strict assistant');
    const policy = await createPolicy({
      name: 'Certain cards only',
      outcome: 'block',
      agentIds: [strict.id],
      conditions: [piiCondition(['creditCard'], { minScore: 0.9 })],
    });
    const bare = await ingest(strict, `Number ${CARD.replaceAll(' ', '')} noted.`);
    expect(bare.statusCode, bare.body).toBe(201);
    expect((await traceOf(bare.json().data.id)).policyResults).toEqual([]);
    const labelled = await ingest(strict, `Card ${CARD.replaceAll(' ', '')} noted.`);
    expect(labelled.statusCode, labelled.body).toBe(403);
    expect(labelled.json().data.policies).toEqual([
      expect.objectContaining({ policyId: policy.id, piiEntities: ['creditCard'] }),
    ]);
  });

  it.each([
    [
      'an unknown type',
      [piiCondition(['iban', 'passport'])],
      'conditions[0].value[1]',
      /must be one of .*creditCard/,
    ],
    ['an empty list', [piiCondition([])], 'conditions[0].value', /non-empty array of PII types/],
    ['a repeated type', [piiCondition(['iban', 'email', 'iban'])], 'conditions[0].value[2]', /listed twice/],
    ['a string instead of a list', [piiCondition('iban')], 'conditions[0].value', /non-empty array/],
    ['minScore above 1', [piiCondition(['iban'], { minScore: 1.5 })], 'conditions[0].minScore', /0 to 1/],
    ['minScore below 0', [piiCondition(['iban'], { minScore: -0.1 })], 'conditions[0].minScore', /0 to 1/],
    [
      'minScore as a string',
      [piiCondition(['iban'], { minScore: '0.5' })],
      'conditions[0].minScore',
      /0 to 1/,
    ],
    [
      'minScore on another operator',
      [
        { field: 'outputDecision.text', operator: 'contains', value: 'refund' },
        { field: 'outputDecision.text', operator: 'contains', value: 'x', minScore: 0.5 },
      ],
      'conditions[1].minScore',
      /only to the containsPii operator/,
    ],
    [
      'containsPii on confidence',
      [{ field: 'confidence', operator: 'containsPii', value: ['iban'] }],
      'conditions[0].operator',
      /does not apply to confidence/,
    ],
  ])(
    'refuses %s with 400 VALIDATION_ERROR naming its path, and creates nothing',
    async (_case, conditions, field, message) => {
      const before = await policyCount();
      const res = await ctx.post(POLICIES, {
        token: owner.token,
        body: { name: 'Refused', outcome: 'flag', conditions },
      });
      const error = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(error.details).toEqual(
        expect.arrayContaining([{ field, message: expect.stringMatching(message) }]),
      );
      expect(await policyCount()).toBe(before);
      // The same condition is refused on an update too, and the policy keeps its conditions.
      const patched = await ctx.patch(`${POLICIES}/${cardPolicy.id}`, {
        token: owner.token,
        body: { conditions },
      });
      expect(expectErrorEnvelope(patched, 400, 'VALIDATION_ERROR').details).toEqual(
        expect.arrayContaining([{ field, message: expect.stringMatching(message) }]),
      );
      const kept = await ctx.get(`${POLICIES}/${cardPolicy.id}`, { token: owner.token });
      expect(kept.json().data.conditions).toEqual([piiCondition(['creditCard'])]);
    },
  );

  it('makes the personal-data templates containsPii policies that judge by checksum', async () => {
    // An organization of its own: template policies apply to every agent.
    const templated = await ctx.register({ organizationName: 'Template users' });
    const agent = await ctx.newAgent(templated.organization.id, 'Template agent');
    const expected: Record<string, { outcome: string; value: string[] }> = {
      'payment-card-in-output': { outcome: 'block', value: ['creditCard'] },
      'email-in-output': { outcome: 'flag', value: ['email'] },
      'bank-account-in-output': { outcome: 'flag', value: ['iban'] },
      'national-id-in-output': {
        outcome: 'block',
        value: ['usSsn', 'ukNino', 'deTaxId', 'frNir', 'esDni', 'itFiscalCode', 'nlBsn', 'plPesel'],
      },
    };
    const created: Record<string, PolicyBody> = {};
    for (const [templateId, { outcome, value }] of Object.entries(expected)) {
      const policy = await createPolicy({ templateId }, templated.token);
      expect(policy).toMatchObject({
        templateId,
        outcome,
        isActive: true,
        conditions: [{ field: 'outputDecision.text', operator: 'containsPii', value }],
      });
      created[templateId] = policy;
    }
    const card = await ingest(agent, `Charged ${CARD}.`);
    expect(card.statusCode, card.body).toBe(403);
    expect(card.json().data.policies).toEqual([
      {
        policyId: created['payment-card-in-output']!.id,
        name: 'Payment-card number in output',
        outcome: 'block',
        piiEntities: ['creditCard'],
      },
    ]);
    const order = await ingest(agent, `Order ${ORDER_NUMBER} shipped.`);
    expect(order.statusCode, order.body).toBe(201);
    const iban = await ingest(agent, `Paid to ${IBAN}.`);
    expect(iban.statusCode, iban.body).toBe(202);
    expect((await traceOf(iban.json().data.id, templated.token)).policyResults).toEqual([
      {
        policyId: created['bank-account-in-output']!.id,
        name: 'Bank account (IBAN) in output',
        outcome: 'flag',
        piiEntities: ['iban'],
      },
    ]);
  });
});
