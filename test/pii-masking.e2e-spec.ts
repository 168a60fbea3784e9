import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import type { TestAgent } from './support/builders.js';
import { columnsHolding } from './support/catalogue.js';
import { openEventStream, until } from './support/event-stream.js';
import { captureLogs } from './support/log-capture.js';
import {
  CLEAR_EMAIL,
  correctQuotingPlanted,
  decideQuotingPlanted,
  FR_IBAN,
  formsIn,
  GB_IBAN,
  GB_IBAN_COMPACT,
  maskingHelpers,
  NL_IBAN,
  occurrences,
  PLANTED_FORMS,
  plantedBody,
  REFUSED_SETTINGS,
  plantedOtlp,
  storedContent,
  tokensIn,
} from './support/pii-masking-suite.js';
import { QUEUE } from './support/review-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const HOOKS = '/api/v1/webhooks';
const OTLP = '/api/v1/otel/v1/traces';
const MASKED_EVENT = 'organization.pii_masking_updated';
const REDACT_ALL = { entities: ['iban', 'email', 'creditCard'], mode: 'redact' } as const;

/**
 * Masking of personal data at ingestion (contract-decisions §19, issue 38): the organization's `piiMasking` setting,
 * who may change it, that it applies from the next trace, that nothing stored, logged, published or exported keeps a
 * masked value while policies still judge the original, and that hash mode keeps equal values equal per organization.
 */
describe('PII masking at ingestion', () => {
  let ctx: TestContext;
  let base: string;
  let dir: string;

  const helpers = maskingHelpers(() => ctx);
  const { patchOrg, currentMasking, setMasking, traceOf, ingest, verifyOf } = helpers;
  const { otlpTraceId, exportOrganization, readingAnswers } = helpers;

  beforeAll(async () => {
    ctx = await TestContext.create({ config: { webhookAllowPrivateNetworks: true } });
    dir = mkdtempSync(join(tmpdir(), 'pii-masking-'));
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await ctx?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('the setting (PATCH /organizations/current piiMasking)', () => {
    let owner: Registered;
    let admin: { token: string; userId: string; email: string };
    let member: { token: string };
    let viewer: { token: string };

    const maskingAudit = () => auditEntries(ctx, owner.token, MASKED_EVENT, { limit: '100' });

    beforeAll(async () => {
      owner = await ctx.register({ organizationName: 'Maskers' });
      admin = await ctx.addMember(owner.organization.id, 'admin');
      member = await ctx.addMember(owner.organization.id, 'member');
      viewer = await ctx.addMember(owner.organization.id, 'viewer');
    });

    it('is off (null) at first, for every role', async () => {
      for (const { token } of [owner, admin, member, viewer]) expect(await currentMasking(token)).toBeNull();
    });

    it('lets an admin and then an owner set it; every role reads it; each change is audited with from and to', async () => {
      const first = { entities: ['iban', 'email'], mode: 'redact' };
      await setMasking(admin.token, first);
      for (const { token } of [owner, member, viewer]) expect(await currentMasking(token)).toEqual(first);
      const second = { entities: ['creditCard'], mode: 'hash' };
      await setMasking(owner.token, second);
      expect(await currentMasking(viewer.token)).toEqual(second);

      const entries = await maskingAudit();
      expect(entries).toHaveLength(2);
      expect(entries[0]).toMatchObject({
        eventType: MASKED_EVENT,
        actor: { type: 'user', id: owner.user.id, email: owner.user.email },
        targetType: 'organization',
        targetId: owner.organization.id,
        metadata: { from: first, to: second },
      });
      expect(entries[1]).toMatchObject({
        actor: { type: 'user', id: admin.userId, email: admin.email },
        metadata: { from: null, to: first },
      });
      // Its own event: an organization.updated entry is written only for the other fields.
      expect(await auditEntries(ctx, owner.token, 'organization.updated')).toEqual([]);
    });

    it.each(['member', 'viewer'] as const)(
      'refuses a %s with 403 FORBIDDEN: the setting stays, nothing is audited',
      async (role) => {
        const token = role === 'member' ? member.token : viewer.token;
        const before = await currentMasking(owner.token);
        const audited = (await maskingAudit()).length;
        for (const piiMasking of [null, { entities: ['iban'], mode: 'redact' }]) {
          expectErrorEnvelope(await patchOrg(token, { piiMasking }), 403, 'FORBIDDEN');
        }
        expect(await currentMasking(owner.token)).toEqual(before);
        expect(await maskingAudit()).toHaveLength(audited);
      },
    );

    it.each(REFUSED_SETTINGS)(
      'refuses %s with 400 VALIDATION_ERROR naming the field; nothing changes',
      async (_case, piiMasking, field, message) => {
        const before = await currentMasking(owner.token);
        expect(before).not.toBeNull();
        const audited = (await maskingAudit()).length;
        const error = expectErrorEnvelope(
          await patchOrg(owner.token, { piiMasking }),
          400,
          'VALIDATION_ERROR',
        );
        expect(error.details).toEqual(
          expect.arrayContaining([{ field, message: expect.stringMatching(message) }]),
        );
        expect(await currentMasking(owner.token)).toEqual(before);
        expect(await maskingAudit()).toHaveLength(audited);
      },
    );
  });

  describe('turning masking on and off', () => {
    it('applies to the traces stored after each change only, and audits each change', async () => {
      const owner = await ctx.register({ organizationName: 'Switchers' });
      const agent = await ctx.newAgent(owner.organization.id, 'Switched agent');
      const body = (n: number) =>
        traceBody(
          {},
          { prompt: `Refund ${n} to ${NL_IBAN}, mail ${CLEAR_EMAIL}` },
          { text: `Refund ${n} sent to ${NL_IBAN}.` },
        );

      const before = await ingest(agent, body(1));
      await setMasking(owner.token, { entities: ['iban'], mode: 'redact' });
      const during = await ingest(agent, body(2));
      const nothingToMask = await ingest(agent, traceBody({}, { prompt: 'Opening hours on Sunday?' }));
      await setMasking(owner.token, null);
      expect(await currentMasking(owner.token)).toBeNull();
      const after = await ingest(agent, body(3));

      // Stored before masking was on: as sent, and still so.
      const first = await traceOf(before.id, owner.token);
      expect(first).toMatchObject({
        piiMasked: null,
        inputContext: { prompt: `Refund 1 to ${NL_IBAN}, mail ${CLEAR_EMAIL}` },
        outputDecision: { text: `Refund 1 sent to ${NL_IBAN}.` },
      });
      // Stored while it was on: the IBANs masked, the e-mail (not a masked type) kept.
      const second = await traceOf(during.id, owner.token);
      expect(second).toMatchObject({
        piiMasked: { iban: 2 },
        inputContext: { prompt: `Refund 2 to <IBAN>, mail ${CLEAR_EMAIL}` },
        outputDecision: { text: 'Refund 2 sent to <IBAN>.' },
      });
      expect((await traceOf(nothingToMask.id, owner.token)).piiMasked).toEqual({});
      // Stored after it was turned off: as sent again.
      const third = await traceOf(after.id, owner.token);
      expect(third).toMatchObject({
        piiMasked: null,
        inputContext: { prompt: `Refund 3 to ${NL_IBAN}, mail ${CLEAR_EMAIL}` },
      });
      for (const id of [before.id, during.id, nothingToMask.id, after.id]) {
        expect(await verifyOf(id, owner.token)).toBe('intact');
      }

      const entries = await auditEntries(ctx, owner.token, MASKED_EVENT);
      expect(entries.map((e) => e.metadata)).toEqual([
        { from: { entities: ['iban'], mode: 'redact' }, to: null },
        { from: null, to: { entities: ['iban'], mode: 'redact' } },
      ]);
      expect(entries.every((e) => e.actor.id === owner.user.id)).toBe(true);

      // The search of the planted-IBAN test finds a value stored in clear: traces 1 and 3 hold this one.
      const holding = await columnsHolding(ctx, [NL_IBAN]);
      for (const column of ['traces.input_context', 'traces.output_decision', 'traces.search_text']) {
        expect(holding).toContain(column);
      }
    });
  });

  describe('a planted IBAN and e-mail address with masking on', () => {
    let owner: Registered;
    let agent: TestAgent;
    let policyId: string;
    let receiver: WebhookReceiver;
    let hook: { id: string; secret: string };
    let stream: ReturnType<typeof openEventStream>;
    let logs: ReturnType<typeof captureLogs>;
    let httpTrace: { id: string; reviewItemId?: string };
    let chatTraceId: string;
    let toolTraceId: string;
    let auditExport: string;
    let organizationExport: string;
    /** The answers of the reading routes, after everything was stored. */
    let answers: string[];

    beforeAll(async () => {
      ctx.clock.set(new Date());
      owner = await ctx.register({ organizationName: 'Planters' });
      await ctx.setPlan(owner.organization.id, 'enterprise');
      agent = await ctx.newAgent(owner.organization.id, 'Refund bot');
      await setMasking(owner.token, REDACT_ALL);
      const policy = await ctx.post('/api/v1/policies', {
        token: owner.token,
        body: {
          name: 'Bank details need a human',
          outcome: 'flag',
          conditions: [{ field: 'outputDecision.text', operator: 'containsPii', value: ['iban'] }],
        },
      });
      expect(policy.statusCode, policy.body).toBe(201);
      policyId = policy.json().data.id;
      receiver = await WebhookReceiver.start();
      const created = await ctx.post(HOOKS, {
        token: owner.token,
        body: {
          url: receiver.url,
          events: ['trace.approved', 'trace.flagged', 'trace.blocked', 'review.completed'],
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      hook = created.json().data;
      const token = await ctx.post('/api/v1/auth/stream-token', { token: owner.token });
      expect(token.statusCode, token.body).toBe(201);
      stream = openEventStream(base, `token=${token.json().data.token}`);
      await stream.opened;

      logs = captureLogs(ctx);
      try {
        const res = await ctx.post(TRACES, {
          apiKey: agent.key,
          body: plantedBody(),
          headers: { 'idempotency-key': 'planted-1' },
        });
        expect(res.statusCode, res.body).toBe(202);
        httpTrace = res.json().data;
        const otlp = await ctx.post(OTLP, {
          apiKey: agent.key,
          payload: plantedOtlp(),
          headers: { 'content-type': 'application/json' },
        });
        expect(otlp.statusCode, otlp.body).toBe(200);
        expect(otlp.json()).toEqual({});
        chatTraceId = await otlpTraceId(owner.organization.id, 'chat');
        toolTraceId = await otlpTraceId(owner.organization.id, 'execute_tool');

        // Each trace is flagged and queued; two are decided, with notes.
        const queue = await ctx.get(QUEUE, { token: owner.token, query: { limit: '100' } });
        expect(queue.statusCode, queue.body).toBe(200);
        const items = queue.json().data as { id: string; traceId: string }[];
        expect(items.map((i) => i.traceId).sort()).toEqual([httpTrace.id, chatTraceId, toolTraceId].sort());
        answers = [queue.body];
        for (const [traceId, decision] of [
          [httpTrace.id, 'approve'],
          [chatTraceId, 'reject'],
        ] as const) {
          const item = items.find((i) => i.traceId === traceId)!;
          answers.push(await decideQuotingPlanted(ctx, owner.token, item.id, decision, traceId));
        }
        await receiver.waitFor(5);
        await until(() => stream.received.length >= 5, 'three trace.flagged and two review.completed events');

        // A CPI correction of the third, its notes and corrected decision quoting the values, closes its item.
        answers.push(await correctQuotingPlanted(ctx, owner, toolTraceId));
        await receiver.waitFor(6);
        await until(() => stream.received.length >= 6, 'the closure of the third item');
        answers.push(...(await readingAnswers([httpTrace.id, chatTraceId, toolTraceId], owner.token)));

        // The exports: the audit chain over HTTP, the organization's records through the operator's CLI.
        const audit = await ctx.get('/api/v1/audit/export', { token: owner.token });
        expect(audit.statusCode, audit.body.slice(0, 300)).toBe(200);
        auditExport = audit.rawPayload.toString('utf8');
        organizationExport = await exportOrganization(owner.organization.id, join(dir, 'planters.ndjson'));
      } finally {
        logs.stop();
        stream.source.close();
      }
    });
    afterAll(async () => {
      logs?.stop();
      stream?.source.close();
      await receiver?.close();
    });

    it('flags each trace by the policy that saw the original, and stores the content masked, with the counts', async () => {
      const http = await traceOf(httpTrace.id, owner.token);
      expect(http).toMatchObject({
        status: 'approved',
        policyResults: [
          { policyId, name: 'Bank details need a human', outcome: 'flag', piiEntities: ['iban'] },
        ],
        piiMasked: { iban: 8, email: 5 },
        inputContext: {
          prompt: 'Please refund order 5521 to IBAN <IBAN> and confirm to <EMAIL>.',
          context: { account: { iban: '<IBAN>', holder: { contact: '<EMAIL>' } } },
        },
        outputDecision: {
          action: 'issue_refund',
          text: 'Refund of order 5521 sent to <IBAN>; the receipt goes to <EMAIL>.',
          toolCalls: [
            {
              name: 'bank_transfer',
              arguments: { iban: '<IBAN>', notify: '<EMAIL>', amount: 42.5, memo: { line: 'IBAN <IBAN>' } },
            },
          ],
        },
        metadata: { customer: { accounts: ['<IBAN>'], channel: 'chat' }, note: 'paid to <IBAN>' },
        rationale: 'The IBAN <IBAN> is the one on file for <EMAIL>.',
      });
      // creditCard is masked too, but none was there: the counts name only what was found.
      expect(Object.keys(http.piiMasked ?? {}).sort()).toEqual(['email', 'iban']);

      const chat = await traceOf(chatTraceId, owner.token);
      expect(chat).toMatchObject({
        status: 'blocked',
        policyResults: [{ policyId, outcome: 'flag', piiEntities: ['iban'] }],
        piiMasked: { iban: 5, email: 4 },
        inputContext: {
          prompt: 'Refund me to <IBAN>, I am <EMAIL>',
          systemPrompt: 'Never repeat <IBAN>.',
          conversationId: 'conversation of <EMAIL>',
        },
        outputDecision: {
          text: 'Sending the refund to <IBAN>.',
          toolCalls: [{ name: 'bank_transfer', arguments: { iban: '<IBAN>', notify: '<EMAIL>' } }],
        },
        metadata: { source: 'otlp', spanName: 'chat <IBAN>', agentName: 'assistant of <EMAIL>' },
      });
      const tool = await traceOf(toolTraceId, owner.token);
      expect(tool).toMatchObject({
        status: 'success',
        humanOverride: true,
        policyResults: [{ policyId, outcome: 'flag', piiEntities: ['iban'] }],
        piiMasked: { iban: 4, email: 2 },
        inputContext: { prompt: 'Refund me to <IBAN>, I am <EMAIL>', systemPrompt: 'Never repeat <IBAN>.' },
        outputDecision: {
          action: 'tool_call',
          text: '{"status":"sent","to":"<IBAN>"}',
          toolCalls: [{ name: 'bank_transfer', arguments: { iban: '<IBAN>', notify: '<EMAIL>' } }],
          // The CPI correction's decision and notes, masked as the content was.
          decision: 'refund to <IBAN>',
          correctionNotes: 'Customer <EMAIL> sent <IBAN>',
        },
      });
      // The counts are the tokens ingestion wrote.
      for (const t of [http, chat]) {
        const content = storedContent(t);
        expect(occurrences(content, '<IBAN>')).toBe(t.piiMasked?.iban);
        expect(occurrences(content, '<EMAIL>')).toBe(t.piiMasked?.email);
      }
    });

    it('keeps the planted values out of every text, varchar, JSON, array and bytes column of every table', async () => {
      expect(await columnsHolding(ctx, PLANTED_FORMS)).toEqual([]);
      // The search reads the columns the content went to: their masked tokens are there.
      const masked = await columnsHolding(ctx, ['<IBAN>']);
      for (const column of [
        'traces.input_context',
        'traces.output_decision',
        'traces.metadata',
        'traces.rationale',
        'traces.search_text',
      ]) {
        expect(masked).toContain(column);
      }
      expect(await columnsHolding(ctx, ['<EMAIL>'])).toContain('traces.output_decision');
    });

    it('writes none of them to the log', () => {
      const text = logs.text();
      // The capture saw the requests: their completion lines are there.
      expect(text).toContain('"url":"/api/v1/traces"');
      expect(text).toContain(`"url":"${OTLP}"`);
      expect(formsIn(text)).toEqual([]);
    });

    it('publishes none of them: the webhook bodies and the event stream carry the types found only', () => {
      // Three flagged traces; two items decided by reviewers, one closed by the CPI correction.
      const published = [...Array(3).fill('review.completed'), ...Array(3).fill('trace.flagged')];
      expect(receiver.received.map((r) => r.json.type).sort()).toEqual(published);
      for (const got of receiver.received) {
        new Webhook(hook.secret).verify(got.body, got.headers as Record<string, string>);
        expect(formsIn(got.body), got.body).toEqual([]);
      }
      const flagged = receiver.ofType('trace.flagged').map((r) => r.json.data);
      expect(flagged.map((d) => d.traceId).sort()).toEqual([httpTrace.id, chatTraceId, toolTraceId].sort());
      for (const data of flagged)
        expect(data).toMatchObject({ policyIds: [policyId], piiEntities: ['iban'] });

      expect(stream.received.map((e) => e.type).sort()).toEqual(published);
      expect(formsIn(JSON.stringify(stream.received))).toEqual([]);
      for (const event of stream.received.filter((e) => e.type === 'trace.flagged')) {
        expect(event.body.data).toMatchObject({ policyIds: [policyId], piiEntities: ['iban'] });
      }
    });

    it('exports none of them, and answers none of them on the reading routes', () => {
      // The exports hold the traces, masked.
      expect(organizationExport).toContain(httpTrace.id);
      expect(organizationExport).toContain('<IBAN>');
      expect(formsIn(organizationExport)).toEqual([]);
      expect(auditExport).toContain(httpTrace.id);
      expect(formsIn(auditExport)).toEqual([]);
      for (const answer of answers) expect(formsIn(answer), answer.slice(0, 300)).toEqual([]);
      expect(answers.join('')).toContain('<IBAN>');
    });

    it('verifies the masked traces intact: the content hash is over what was stored', async () => {
      for (const id of [httpTrace.id, chatTraceId, toolTraceId])
        expect(await verifyOf(id, owner.token)).toBe('intact');
      const chain = await ctx.get('/api/v1/audit/verify', { token: owner.token, query: { content: 'true' } });
      expect(chain.statusCode, chain.body).toBe(200);
      expect(chain.json().data).toMatchObject({ valid: true, contentChecked: 3, contentAltered: 0 });
    });
  });

  describe('hash mode', () => {
    it('writes one token per value: equal values equal however written, different values different, per organization', async () => {
      const owner = await ctx.register({ organizationName: 'Hashers' });
      const agent = await ctx.newAgent(owner.organization.id, 'Hashing agent');
      const other = await ctx.register({ organizationName: 'Other hashers' });
      const otherAgent = await ctx.newAgent(other.organization.id, 'Other hashing agent');
      const setting = { entities: ['iban', 'email'], mode: 'hash' };
      await setMasking(owner.token, setting);
      await setMasking(other.token, setting);

      const text = async (a: TestAgent, token: string, output: string) => {
        const { id } = await ingest(a, traceBody({}, {}, { text: output }));
        const trace = await traceOf(id, token);
        expect(await verifyOf(id, token)).toBe('intact');
        return trace;
      };
      const spaced = await text(agent, owner.token, `Paid to ${GB_IBAN}, receipt to Jane.Doe@Example.org.`);
      const compact = await text(
        agent,
        owner.token,
        `Paid again to ${GB_IBAN_COMPACT}, receipt to jane.doe@example.org.`,
      );
      const french = await text(agent, owner.token, `Paid to ${FR_IBAN}.`);
      const elsewhere = await text(otherAgent, other.token, `Paid to ${GB_IBAN_COMPACT}.`);

      expect(spaced.piiMasked).toEqual({ iban: 1, email: 1 });
      const [gb] = tokensIn(spaced.outputDecision.text, 'IBAN');
      expect(gb).toMatch(/^[0-9a-f]{12}$/);
      expect(spaced.outputDecision.text).toBe(
        `Paid to <IBAN:${gb}>, receipt to <EMAIL:${tokensIn(spaced.outputDecision.text, 'EMAIL')[0]}>.`,
      );
      // The same IBAN written without spaces, and the same address in other case: the same tokens.
      expect(tokensIn(compact.outputDecision.text, 'IBAN')).toEqual([gb]);
      expect(tokensIn(compact.outputDecision.text, 'EMAIL')).toEqual(
        tokensIn(spaced.outputDecision.text, 'EMAIL'),
      );
      // Another IBAN: another token.
      const [fr] = tokensIn(french.outputDecision.text, 'IBAN');
      expect(fr).toMatch(/^[0-9a-f]{12}$/);
      expect(fr).not.toBe(gb);
      // Another organization: another key, another token for the same IBAN.
      const [theirs] = tokensIn(elsewhere.outputDecision.text, 'IBAN');
      expect(theirs).toMatch(/^[0-9a-f]{12}$/);
      expect(theirs).not.toBe(gb);
      // The tokens do not carry the values.
      for (const t of [spaced, compact, french, elsewhere]) {
        const content = storedContent(t);
        expect(
          formsIn(content, [GB_IBAN, GB_IBAN_COMPACT, '12345698765432', 'WEST', FR_IBAN, '20041010', 'Doe@']),
        ).toEqual([]);
        expect(content.toLowerCase()).not.toContain('jane.doe');
      }
    });
  });
});
