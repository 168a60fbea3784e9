import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStreamHub } from '#governance';
import { JobScheduler } from '#platform';
import { recordSpans, toOtlpJson } from '../libs/governance/src/otel/otlp-payloads.fixture.js';
import { type Registered, TestContext } from './support/app.js';
import type { TestAgent } from './support/builders.js';
import { Exposition } from './support/metrics-scrape.js';
import { TRACES, traceBody } from './support/traces-suite.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

// The domain's metrics (ingestion, the outbox and webhook delivery, the event stream, jobs, the audit log), read
// through GET /metrics as Prometheus reads them, after traffic this file's application alone served. Its clock
// stands still, so the gauges read at scrape time (cached 5 s by that clock) are read afresh only when it moves.

const TOKEN = 'metrics-domain-e2e-token-0123456789abcdef';
const OTLP = '/api/v1/otel/v1/traces';
const FLAG_PROMPT = 'Please review this refund';
const WEBHOOK_TOPIC = { topic: 'webhook.deliver' };

/** A counter's or gauge's sample, 0 when the series does not exist yet. */
const valueOf = (families: Exposition, name: string, labels: Record<string, string> = {}) =>
  families.value(name, labels) ?? 0;

/** An unlabelled histogram's observation count and sum (0 before its first observation). */
function histogramOf(families: Exposition, name: string): { count: number; sum: number } {
  return { count: families.sum(`${name}_count`), sum: families.sum(`${name}_sum`) };
}

function chatSpan(prompt: string) {
  return {
    name: 'chat gpt-4o',
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: 'Thirty days.' }] },
      ]),
    },
  };
}

describe('domain metrics', () => {
  let ctx: TestContext;
  let receiver: WebhookReceiver;
  let owner: Registered;
  let agent: TestAgent;
  let hooked: TestAgent;
  let base: string;
  /** The exposition before any of the tests' traffic. */
  let start: Exposition;

  const scrape = async (): Promise<Exposition> => {
    const res = await ctx.get('/metrics', { token: TOKEN });
    expect(res.statusCode, res.body).toBe(200);
    return new Exposition(res.body);
  };

  /** Opens GET /events/stream on the listening application; resolves once the hub has subscribed it. */
  async function openSse(): Promise<{ events: () => number; close: () => Promise<void> }> {
    const hub = ctx.service(EventStreamHub);
    const opened = hub.opened;
    const token = await ctx.post('/api/v1/auth/stream-token', { token: owner.token });
    expect(token.statusCode, token.body).toBe(201);
    const res = await fetch(`${base}/api/v1/events/stream?token=${token.json().data.token}`);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    void (async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        text += decoder.decode(chunk.value, { stream: true });
      }
    })().catch(() => undefined);
    await expect.poll(() => hub.opened).toBe(opened + 1);
    return {
      events: () => text.match(/^event: /gm)?.length ?? 0,
      close: () => reader.cancel().catch(() => undefined),
    };
  }

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    // The webhook's first attempt fails: its message stays in the outbox until the retry pass delivers it.
    receiver.answer({ status: 503 });
    ctx = await TestContext.create({
      config: {
        webhookAllowPrivateNetworks: true,
        // No job runs but those the tests run.
        workers: false,
        metrics: { enabled: true, host: '127.0.0.1', token: TOKEN },
        auditCheckpointInterval: { entries: 1, minutes: 60 },
      },
    });
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
    owner = await ctx.register({ organizationName: 'Measured' });
    agent = await ctx.newAgent(owner.organization.id, 'Measured agent');
    hooked = await ctx.newAgent(owner.organization.id, 'Hooked agent');
    await ctx.newPolicy(owner.organization.id, {
      name: 'Reviewed refunds',
      outcome: 'flag',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: FLAG_PROMPT }],
    });
    const hook = await ctx.post('/api/v1/webhooks', {
      token: owner.token,
      body: { url: receiver.url, events: ['trace.flagged'], filterAgentId: hooked.id },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    start = await scrape();
  });
  afterAll(async () => {
    await ctx?.close();
    await receiver?.close();
  });

  it('counts 10 traces by outcome and source, a replay, their evaluations, commits and audit entries, and the stream that saw them', async () => {
    const stream = await openSse();
    const sse = { transport: 'sse' };
    const opened = await scrape();
    expect(valueOf(opened, 'governance_stream_connections', sse)).toBe(
      valueOf(start, 'governance_stream_connections', sse) + 1,
    );

    // 9 over HTTP (3 flagged, one of them by the agent the webhook follows), 1 over OTLP beside a span that is not
    // GenAI, and a repeated Idempotency-Key.
    const post = async (key: string, prompt: string, headers: Record<string, string> = {}) =>
      (await ctx.post(TRACES, { apiKey: key, headers, body: traceBody({}, { prompt }) })).statusCode;
    expect(await post(agent.key, 'Refund window?', { 'idempotency-key': 'measured-1' })).toBe(201);
    expect(await post(agent.key, 'Refund window?', { 'idempotency-key': 'measured-1' })).toBe(409);
    for (let i = 0; i < 5; i++) expect(await post(agent.key, `Order ${i}?`)).toBe(201);
    for (let i = 0; i < 2; i++) expect(await post(agent.key, `${FLAG_PROMPT} ${i}`)).toBe(202);
    expect(await post(hooked.key, FLAG_PROMPT)).toBe(202);
    const spans = recordSpans([
      chatSpan('What is the refund window?'),
      { name: 'GET /orders', attributes: { 'http.request.method': 'GET' } },
    ]);
    const otlp = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: toOtlpJson(spans),
      headers: { 'content-type': 'application/json' },
    });
    expect(otlp.statusCode, otlp.body).toBe(200);
    expect(otlp.json()).toEqual({});

    // The webhook's first attempt is answered 503, and counted once its outcome is written.
    await receiver.waitFor(1);
    const attempts = (families: Exposition, result: string) =>
      valueOf(families, 'governance_outbox_attempts_total', { ...WEBHOOK_TOPIC, result });
    await expect.poll(async () => attempts(await scrape(), 'failure')).toBe(attempts(start, 'failure') + 1);
    await expect.poll(stream.events).toBe(10);

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) =>
      valueOf(after, name, labels) - valueOf(opened, name, labels);
    const ingested = (outcome: string, source: string) =>
      moved('governance_traces_ingested_total', { outcome, source });
    expect(ingested('approved', 'http')).toBe(6);
    expect(ingested('flagged', 'http')).toBe(3);
    expect(ingested('approved', 'otlp')).toBe(1);
    expect(ingested('blocked', 'http') + ingested('flagged', 'otlp') + ingested('blocked', 'otlp')).toBe(0);
    expect(moved('governance_trace_idempotent_replays_total')).toBe(1);
    expect(moved('governance_otlp_spans_total', { result: 'accepted' })).toBe(2);
    expect(moved('governance_otlp_spans_total', { result: 'refused' })).toBe(0);
    expect(moved('governance_audit_entries_appended_total')).toBe(10);
    expect(moved('governance_stream_events_sent_total', sse)).toBe(10);
    expect(attempts(after, 'success')).toBe(attempts(start, 'success'));
    const histogramMoved = (name: string) => {
      const [now, then] = [histogramOf(after, name), histogramOf(opened, name)];
      return { count: now.count - then.count, sum: now.sum - then.sum };
    };
    // The replay too is evaluated and handed to the writer before its key is found taken: 11 traces went through
    // policies and group commits (in one batch or more).
    expect(histogramMoved('governance_policy_evaluation_seconds').count).toBe(11);
    const batches = histogramMoved('governance_trace_writer_batch_size');
    expect(batches.sum).toBe(11);
    expect(batches.count).toBeGreaterThanOrEqual(1);
    expect(histogramMoved('governance_trace_writer_batch_commit_seconds').count).toBe(batches.count);

    await stream.close();
    await expect
      .poll(async () => valueOf(await scrape(), 'governance_stream_connections', sse))
      .toBe(valueOf(start, 'governance_stream_connections', sse));
  });

  it('shows the undelivered message in the outbox backlog, its age once due, and the delivery lag of the retry pass that delivered it', async () => {
    const backlog = (families: Exposition) => ({
      pending: families.value('governance_outbox_backlog', WEBHOOK_TOPIC),
      oldestDueAge: families.value('governance_outbox_oldest_due_age_seconds', WEBHOOK_TOPIC),
    });
    // The failed attempt set the next one about 30 s ahead (±20 %): pending, not yet due.
    ctx.clock.advance(5_000);
    expect(backlog(await scrape())).toEqual({ pending: 1, oldestDueAge: 0 });
    ctx.clock.advance(60_000);
    const due = backlog(await scrape());
    expect(due.pending).toBe(1);
    expect(due.oldestDueAge).toBeGreaterThanOrEqual(65 - 36);
    expect(due.oldestDueAge).toBeLessThanOrEqual(65 - 24);

    const before = await scrape();
    await ctx.service(JobScheduler).runNow('outbox');
    await receiver.waitFor(2);
    expect(receiver.received.map((r) => r.json.type)).toEqual(['trace.flagged', 'trace.flagged']);
    ctx.clock.advance(5_000);
    const after = await scrape();
    expect(backlog(after)).toEqual({ pending: 0, oldestDueAge: 0 });
    const outboxRun = { job_name: 'outbox', result: 'success' };
    expect(valueOf(after, 'governance_job_runs_total', outboxRun)).toBe(
      valueOf(before, 'governance_job_runs_total', outboxRun) + 1,
    );
    const attempts = (result: string) =>
      valueOf(after, 'governance_outbox_attempts_total', { ...WEBHOOK_TOPIC, result }) -
      valueOf(start, 'governance_outbox_attempts_total', { ...WEBHOOK_TOPIC, result });
    expect({ success: attempts('success'), failure: attempts('failure') }).toEqual({
      success: 1,
      failure: 1,
    });
    expect(valueOf(after, 'governance_job_claims_lost_total', { job_name: 'outbox' })).toBe(0);
    // One observation: the event was committed 65 s (by the test's clock) before the receiver's 200.
    const lag = (families: Exposition) => histogramOf(families, 'governance_webhook_delivery_lag_seconds');
    expect(lag(after).count - lag(start).count).toBe(1);
    expect(lag(after).sum - lag(start).sum).toBeCloseTo(65, 6);
    expect(valueOf(after, 'governance_webhooks_disabled_total')).toBe(
      valueOf(start, 'governance_webhooks_disabled_total'),
    );
  });

  it('counts a checkpoint job run and the verification it made, and shows the newest checkpoint’s age, absent before the first', async () => {
    ctx.clock.advance(5_000);
    const before = await scrape();
    expect(before.select('governance_audit_checkpoint_age_seconds')).toEqual([]);
    await ctx.service(JobScheduler).runNow('audit-checkpoints');
    const checkpoints = await ctx.get('/api/v1/audit/checkpoints', { token: owner.token });
    expect(checkpoints.statusCode, checkpoints.body).toBe(200);
    expect(checkpoints.json().data).toHaveLength(1);
    ctx.clock.advance(5_000);
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(moved('governance_job_runs_total', { job_name: 'audit-checkpoints', result: 'success' })).toBe(1);
    expect(moved('governance_job_runs_total', { job_name: 'audit-checkpoints', result: 'failure' })).toBe(0);
    expect(moved('governance_audit_verification_runs_total', { result: 'valid' })).toBe(1);
    expect(moved('governance_audit_verification_runs_total', { result: 'invalid' })).toBe(0);
    expect(valueOf(after, 'governance_audit_verification_entries_per_second')).toBeGreaterThan(0);
    expect(after.value('governance_audit_checkpoint_age_seconds')).toBe(5);
  });
});
