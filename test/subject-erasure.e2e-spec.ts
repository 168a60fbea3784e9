import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '#platform';
import { ERASURE_COVERAGE } from '../libs/governance/src/subjects/erasure-coverage.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import type { TestAgent } from './support/builders.js';
import { INGEST as CPI_INGEST, workspaceKey } from './support/cpi-suite.js';
import { openEventStream, until } from './support/event-stream.js';
import { QUEUE } from './support/review-suite.js';
import { countOf, rowsOf } from './support/rows.js';
import { TRACES } from './support/traces-suite.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const SUBJECTS = '/api/v1/subjects';
const HOOKS = '/api/v1/webhooks';
/** Planted in every personal field of the subject's traces; no column may hold it after the erasure. */
const MARKER = 'MARKER-7f3a91-erase-me';
const REF = 'customer/4711 é';
const subject = (ref: string, rest: string) => `${SUBJECTS}/${encodeURIComponent(ref)}/${rest}`;

/** Columns that could hold free text: text, json, jsonb, arrays, and character varying longer than 255. */
function textColumns(ctx: TestContext): Promise<{ table: string; column: string }[]> {
  return rowsOf<{ table: string; column: string }>(
    ctx,
    sql`select table_name as "table", column_name as "column"
    from information_schema.columns
    where table_schema = current_schema()
      and (data_type in ('text', 'json', 'jsonb', 'ARRAY') or character_maximum_length > 255)
    order by 1, 2`,
  );
}

/** Every column of `textColumns` whose value contains the text, as `table.column`. */
async function columnsHolding(ctx: TestContext, text: string): Promise<string[]> {
  const found: string[] = [];
  for (const { table, column } of await textColumns(ctx)) {
    const n = await countOf(
      ctx,
      sql`select count(*)::int as n from ${sql.identifier(table)} where ${sql.identifier(column)}::text like ${`%${text}%`}`,
    );
    if (n > 0) found.push(`${table}.${column}`);
  }
  return found;
}

describe('subject erasure (GDPR article 17)', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let admin: { token: string };
  let member: { token: string };
  let agent: TestAgent;
  let second: TestAgent;
  let otherAgent: TestAgent;
  let receiver: WebhookReceiver;
  let hookSecret: string;
  let hookId: string;
  const subjectTraces: string[] = [];
  let bystanderTrace: string;
  let otherOrgTrace: string;
  let base: string;

  const ingest = async (a: TestAgent, ref: string | undefined, prompt: string) => {
    const res = await ctx.post(TRACES, {
      apiKey: a.key,
      body: {
        inputContext: { prompt, context: { note: `${prompt} context` } },
        outputDecision: {
          action: 'refund_decision',
          text: `Answer about ${prompt}`,
          toolCalls: [{ name: 'lookup', arguments: { q: prompt } }],
        },
        metadata: { customerNote: prompt },
        rationale: `Because ${prompt}`,
        confidence: 0.9,
        ...(ref === undefined ? {} : { subjectRef: ref }),
      },
    });
    expect([201, 202], res.body).toContain(res.statusCode);
    return res.json().data as { id: string; reviewItemId?: string };
  };
  const erasureOf = async (ref: string, token = owner.token) => ctx.get(subject(ref, 'erasure'), { token });
  const eraseAndWait = async (ref: string) => {
    const res = await ctx.post(subject(ref, 'erasure'), { token: owner.token });
    expect(res.statusCode, res.body).toBe(202);
    const { jobId } = res.json().data as { jobId: string };
    for (let i = 0; i < 100; i++) {
      const state = (await erasureOf(ref)).json().data;
      if (state.status === 'done') return state as Record<string, unknown>;
      await new Promise((r) => setTimeout(r, 50));
      // The erasure runs after its request commits; the retry pass picks it up if that attempt failed.
      if (i % 20 === 19) await ctx.service(Outbox).runDue('subject.erase');
    }
    throw new Error(`erasure ${jobId} did not finish`);
  };

  beforeAll(async () => {
    ctx = await TestContext.create({ config: { webhookAllowPrivateNetworks: true } });
    ctx.clock.set(new Date());
    owner = await ctx.register({ organizationName: 'Erasers' });
    other = await ctx.register({ organizationName: 'Bystanders' });
    await ctx.setPlan(owner.organization.id, 'enterprise');
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    agent = await ctx.newAgent(owner.organization.id, 'Refund bot');
    second = await ctx.newAgent(owner.organization.id, 'Claims bot');
    otherAgent = await ctx.newAgent(other.organization.id, 'Other bot');
    await ctx.newPolicy(owner.organization.id, {
      name: 'Markers need a human',
      outcome: 'flag',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'flag-me' }],
    });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
    receiver = await WebhookReceiver.start();
    const hook = await ctx.post(HOOKS, {
      token: owner.token,
      body: { url: receiver.url, events: ['review.completed'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    hookSecret = hook.json().data.secret;
    hookId = hook.json().data.id;

    // The subject's decisions: two agents, one flagged and reviewed with notes quoting the content, one corrected
    // through CPI, all carrying the marker in every personal field.
    const flagged = await ingest(agent, REF, `flag-me ${MARKER}`);
    subjectTraces.push(flagged.id);
    const reviewed = await ctx.post(`${QUEUE}/${flagged.reviewItemId}/decision`, {
      token: member.token,
      body: { decision: 'approve', notes: `Customer said ${MARKER}` },
    });
    expect(reviewed.statusCode, reviewed.body).toBe(200);
    await receiver.waitFor(1);
    const corrected = await ingest(second, REF, `second ${MARKER}`);
    subjectTraces.push(corrected.id);
    const key = await workspaceKey(ctx, owner);
    const cpi = await ctx.post(CPI_INGEST, {
      apiKey: key.key,
      body: {
        traceId: corrected.id,
        correctedDecision: { decision: 'approve' },
        feedbackNotes: `Corrected for ${MARKER}`,
      },
    });
    expect(cpi.statusCode, cpi.body).toBe(200);
    for (let i = 0; i < 3; i++) subjectTraces.push((await ingest(agent, REF, `plain ${i} ${MARKER}`)).id);
    // Another person's trace and another organization's trace under the same reference keep their content.
    bystanderTrace = (await ingest(agent, 'customer/4712', 'bystander KEEP-1')).id;
    otherOrgTrace = (await ingest(otherAgent, REF, 'other org KEEP-2')).id;
  });
  afterAll(async () => {
    await receiver?.close();
    await ctx?.close();
  });

  it('lists every text and jsonb column of the schema in the erasure coverage, and nothing else', async () => {
    const columns = (await textColumns(ctx)).map(({ table, column }) => `${table}.${column}`);
    expect(columns.length).toBeGreaterThan(30);
    const uncovered = columns.filter((c) => !(c in ERASURE_COVERAGE));
    // A new column that can hold free text must say whether erasure removes its content, and how.
    expect(uncovered, 'columns missing from ERASURE_COVERAGE').toEqual([]);
    expect(Object.keys(ERASURE_COVERAGE).filter((c) => !columns.includes(c))).toEqual([]);
  });

  it('is for the owner only; a bad reference is 400 and starts nothing', async () => {
    expectErrorEnvelope(await ctx.post(subject(REF, 'erasure'), { token: admin.token }), 403, 'FORBIDDEN');
    expectErrorEnvelope(await ctx.post(subject(REF, 'erasure'), { token: member.token }), 403, 'FORBIDDEN');
    expectErrorEnvelope(await ctx.post(subject(REF, 'erasure'), { apiKey: agent.key }), 403, 'FORBIDDEN');
    expectErrorEnvelope(
      await ctx.post(subject('x'.repeat(201), 'erasure'), { token: owner.token }),
      400,
      'VALIDATION_ERROR',
    );
    expectErrorEnvelope(await erasureOf(REF), 404, 'NOT_FOUND');
    expect(await columnsHolding(ctx, MARKER)).toContain('traces.input_context');
  });

  it('erases the content everywhere, keeps the skeleton, and the chain still verifies', async () => {
    const before = await ctx.get(`${TRACES}/${subjectTraces[0]}/verify`, { token: owner.token });
    expect(before.json().data.status).toBe('intact');
    const held = await columnsHolding(ctx, MARKER);
    for (const c of [
      'traces.input_context',
      'traces.search_text',
      'review_items.notes',
      'domain_events.data',
    ])
      expect(held).toContain(c);

    const done = await eraseAndWait(REF);
    expect(done).toMatchObject({ status: 'done', tracesErased: subjectTraces.length, stoppedByHold: false });
    expect(done.finishedAt).toEqual(expect.any(String));

    // No column of any table holds the marker any more.
    expect(await columnsHolding(ctx, MARKER)).toEqual([]);

    for (const id of subjectTraces) {
      const t = (await ctx.get(`${TRACES}/${id}`, { token: owner.token })).json().data;
      expect(t).toMatchObject({
        id,
        inputContext: null,
        outputDecision: null,
        metadata: null,
        rationale: null,
        contentSalt: null,
        hasSubject: true,
        erasedAt: expect.any(String),
      });
      expect(typeof t.confidence).toBe('number');
      const verified = await ctx.get(`${TRACES}/${id}/verify`, { token: owner.token });
      expect(verified.statusCode).toBe(200);
      expect(verified.json().data.status).toBe('erased');
    }
    const flagged = (await ctx.get(`${TRACES}/${subjectTraces[0]}`, { token: owner.token })).json().data;
    expect(flagged.status).toBe('approved');
    expect(flagged.policyResults).toEqual([expect.objectContaining({ name: 'Markers need a human' })]);

    // The others keep their content.
    const bystander = (await ctx.get(`${TRACES}/${bystanderTrace}`, { token: owner.token })).json().data;
    expect(bystander.inputContext.prompt).toBe('bystander KEEP-1');
    const otherOrg = (await ctx.get(`${TRACES}/${otherOrgTrace}`, { token: other.token })).json().data;
    expect(otherOrg.inputContext.prompt).toBe('other org KEEP-2');

    const chain = await ctx.get('/api/v1/audit/verify', { token: owner.token, query: { full: 'true' } });
    expect(chain.statusCode, chain.body).toBe(200);
    expect(chain.json().data.valid).toBe(true);

    const [erased] = await auditEntriesOf(ctx, owner.organization.id, 'subject.erased');
    expect(erased!.metadata).toMatchObject({ tracesErased: subjectTraces.length, stoppedByHold: false });
    expect(JSON.stringify(erased)).not.toContain('4711');
    const requested = await auditEntriesOf(ctx, owner.organization.id, 'subject.erasure_requested');
    expect(requested).toHaveLength(1);
    expect(requested[0]!.userId).toBe(owner.user.id);
  });

  it('leaves no content in a replayed event stream nor in a redelivered webhook', async () => {
    const token = await ctx.post('/api/v1/auth/stream-token', { token: owner.token });
    expect(token.statusCode, token.body).toBe(201);
    // After the flagged trace's event: the replay sends the review that followed.
    const [flaggedEvent] = await auditEntriesOf(
      ctx,
      owner.organization.id,
      'trace.flagged',
      subjectTraces[0],
    );
    const stream = openEventStream(base, `token=${token.json().data.token}&lastEventId=${flaggedEvent!.id}`);
    try {
      await stream.opened;
      await until(() => stream.received.some((e) => e.type === 'review.completed'), 'the replayed review');
      const review = stream.received.find((e) => e.type === 'review.completed')!;
      expect(review.body.data).toMatchObject({ traceId: subjectTraces[0], decision: 'approve' });
      expect(JSON.stringify(stream.received)).not.toContain(MARKER);
    } finally {
      stream.source.close();
    }
    const deliveries = (await ctx.get(`${HOOKS}/${hookId}/deliveries`, { token: owner.token })).json().data;
    expect(deliveries.length).toBeGreaterThan(0);
    expect(receiver.received[0]!.body).toContain(MARKER);
    const again = await ctx.post(`${HOOKS}/${hookId}/deliveries/${deliveries[0].id}/redeliver`, {
      token: owner.token,
    });
    expect(again.statusCode, again.body).toBe(201);
    await receiver.waitFor(2);
    const redelivered = receiver.received[1]!;
    new Webhook(hookSecret).verify(redelivered.body, redelivered.headers as Record<string, string>);
    expect(redelivered.json.type).toBe('review.completed');
    expect(redelivered.body).not.toContain(MARKER);
  });

  it('is idempotent: erasing again finds nothing more, and is audited again', async () => {
    const done = await eraseAndWait(REF);
    expect(done).toMatchObject({ status: 'done', tracesErased: 0 });
    expect(await auditEntriesOf(ctx, owner.organization.id, 'subject.erased')).toHaveLength(2);
  });

  it('refuses a CPI verdict on an erased trace with 409 TRACE_ERASED', async () => {
    const key = await workspaceKey(ctx, owner);
    const res = await ctx.post(CPI_INGEST, {
      apiKey: key.key,
      body: { traceId: subjectTraces[1], action: 'approve' },
    });
    expectErrorEnvelope(res, 409, 'TRACE_ERASED');
  });
});
