import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DomainEvents, Outbox, TransactionHost } from '#platform';
import { replicaContext, type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { ingestFlagged, refundFlagPolicy } from './support/review-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const HOOKS = '/api/v1/webhooks';

describe('webhooks: delivery', () => {
  let ctx: TestContext;
  let owner: Registered;
  let agent: TestAgent;
  let otherAgent: TestAgent;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    ctx = await TestContext.create({ config: { webhookAllowPrivateNetworks: true } });
    owner = await ctx.register({ organizationName: 'Delivered' });
    agent = await ctx.newAgent(owner.organization.id, 'Sender');
    otherAgent = await ctx.newAgent(owner.organization.id, 'Unfiltered');
    await refundFlagPolicy(ctx, owner.organization.id, []);
  });
  afterAll(async () => ctx?.close());
  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
    // Standard Webhooks receivers refuse timestamps more than 5 minutes from their clock.
    ctx.clock.set(new Date());
  });
  afterEach(async () => {
    await receiver?.close();
    // Each test subscribes afresh: earlier subscriptions would add deliveries to closed receivers.
    const list = await ctx.get(HOOKS, { token: owner.token, query: { limit: '100' } });
    for (const { id } of list.json().data as { id: string }[]) {
      await ctx.request('DELETE', `${HOOKS}/${id}`, { token: owner.token });
    }
  });

  const subscribe = async (body: Record<string, unknown>, context = ctx) => {
    const res = await context.post(HOOKS, { token: owner.token, body: { url: receiver.url, ...body } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: string; secret: string };
  };
  const deliveries = async (id: string) => {
    const res = await ctx.get(`${HOOKS}/${id}/deliveries`, { token: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as Record<string, unknown>[];
  };
  /** Runs the retry pass as the outbox job would, after moving the clock past the backoff. */
  const retryAfter = async (ms: number, context = ctx) => {
    context.clock.advance(ms);
    await context.service(Outbox).runDue('webhook.deliver');
  };
  const verify = (secret: string, hook: { headers: Record<string, unknown>; body: string }) =>
    new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>);

  it('delivers a flagged trace’s event, signed per Standard Webhooks, only to matching subscriptions', async () => {
    const hook = await subscribe({ events: ['trace.flagged'], filterAgentId: agent.id });
    const { traceId } = await ingestFlagged(ctx, agent);
    await ingestFlagged(ctx, otherAgent);
    const approved = await ctx.post(TRACES, { apiKey: agent.key, body: traceBody({}, { prompt: 'Hello' }) });
    expect(approved.statusCode).toBe(201);
    await receiver.waitFor(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received).toHaveLength(1);
    const [got] = receiver.received;
    expect(got!.headers['content-type']).toBe('application/json');
    const payload = verify(hook.secret, got!) as { type: string; data: Record<string, unknown> };
    expect(payload).toMatchObject({
      type: 'trace.flagged',
      data: { traceId, agentId: agent.id, status: 'flagged' },
    });
    expect(got!.json.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(got!.headers['webhook-id']).toMatch(/^[0-9a-f]{24}$/);
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, got!)).toThrow();
    await expect.poll(async () => (await deliveries(hook.id))[0]?.status).toBe('succeeded');
    const [delivery] = await deliveries(hook.id);
    expect(delivery).toMatchObject({
      eventId: got!.headers['webhook-id'],
      eventType: 'trace.flagged',
      attempts: 1,
      responseStatus: 200,
      responseBody: 'ok',
      error: null,
      completedAt: expect.any(String),
    });
  });

  it('retries after a 500 with the same webhook-id, then succeeds; the log keeps the truncated answer', async () => {
    const hook = await subscribe({ events: ['trace.flagged'] });
    receiver.answer({ status: 500, body: 'x'.repeat(5000) });
    await ingestFlagged(ctx, agent);
    await receiver.waitFor(1);
    await expect.poll(async () => (await deliveries(hook.id))[0]?.attempts).toBe(1);
    const [failed] = await deliveries(hook.id);
    expect(failed).toMatchObject({
      status: 'pending',
      responseStatus: 500,
      error: 'The receiver answered 500',
    });
    expect((failed!.responseBody as string).length).toBe(1024);
    const wait = Date.parse(failed!.nextAttemptAt as string) - ctx.clock.nowMs();
    expect(wait).toBeGreaterThanOrEqual(24_000);
    expect(wait).toBeLessThanOrEqual(36_000);
    await retryAfter(10_000);
    expect(receiver.received).toHaveLength(1);
    await retryAfter(30_000);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    verify(hook.secret, receiver.received[1]!);
    const [done] = await deliveries(hook.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      attempts: 2,
      responseStatus: 200,
      nextAttemptAt: null,
    });
  });

  it('honours Retry-After on 429 and 503, and gives up after six attempts', async () => {
    const hook = await subscribe({ events: ['trace.flagged'] });
    receiver.answer({ status: 429, headers: { 'retry-after': '120' } });
    await ingestFlagged(ctx, agent);
    await receiver.waitFor(1);
    await expect.poll(async () => (await deliveries(hook.id))[0]?.attempts).toBe(1);
    const [first] = await deliveries(hook.id);
    expect(Date.parse(first!.nextAttemptAt as string) - ctx.clock.nowMs()).toBe(120_000);
    receiver.answer(
      { status: 503, headers: { 'retry-after': '5' } },
      { status: 500 },
      { status: 500 },
      { status: 500 },
      { status: 500 },
    );
    await retryAfter(120_000);
    expect(receiver.received).toHaveLength(2);
    const [second] = await deliveries(hook.id);
    expect(Date.parse(second!.nextAttemptAt as string) - ctx.clock.nowMs()).toBe(5000);
    // After the n-th failure the pause is the n-th backoff (10 min, 1 h, 6 h for the 3rd to 5th) plus up to 20 %.
    for (const wait of [5000, 720_000, 4_320_000, 25_920_000]) await retryAfter(wait);
    expect(receiver.received).toHaveLength(6);
    const [last] = await deliveries(hook.id);
    expect(last).toMatchObject({ status: 'failed', attempts: 6, responseStatus: 500, nextAttemptAt: null });
    await retryAfter(30_000_000);
    expect(receiver.received).toHaveLength(6);
  });

  it('a 410 disables the webhook; PATCH isActive true enables it again', async () => {
    const hook = await subscribe({ events: ['trace.flagged'] });
    receiver.answer({ status: 410 });
    await ingestFlagged(ctx, agent);
    await receiver.waitFor(1);
    await expect
      .poll(async () => (await ctx.get(`${HOOKS}/${hook.id}`, { token: owner.token })).json().data.isActive)
      .toBe(false);
    const disabled = (await ctx.get(`${HOOKS}/${hook.id}`, { token: owner.token })).json().data;
    expect(disabled.disabledReason).toMatch(/410/);
    expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'failed', responseStatus: 410 });
    await ingestFlagged(ctx, agent);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1);
    expectErrorEnvelope(
      await ctx.post(`${HOOKS}/${hook.id}/test`, { token: owner.token }),
      409,
      'WEBHOOK_DISABLED',
    );
    const enabled = await ctx.patch(`${HOOKS}/${hook.id}`, { token: owner.token, body: { isActive: true } });
    expect(enabled.json().data).toMatchObject({ isActive: true, disabledReason: null });
    await ingestFlagged(ctx, agent);
    await receiver.waitFor(2);
  });

  it('sends both signatures during a rotation’s grace period, then only the new one', async () => {
    const hook = await subscribe({ events: ['webhook.test'] });
    const rotated = await ctx.post(`${HOOKS}/${hook.id}/rotate-secret`, {
      token: owner.token,
      body: { gracePeriodSeconds: 60 },
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const { secret, previousSecretExpiresAt } = rotated.json().data;
    expect(secret).not.toBe(hook.secret);
    expect(Date.parse(previousSecretExpiresAt) - ctx.clock.nowMs()).toBe(60_000);
    const test = await ctx.post(`${HOOKS}/${hook.id}/test`, { token: owner.token });
    expect(test.statusCode, test.body).toBe(200);
    expect(test.json().data).toMatchObject({ eventType: 'webhook.test', status: 'succeeded', attempts: 1 });
    const during = receiver.received[0]!;
    expect((during.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(verify(secret, during)).toMatchObject({ type: 'webhook.test', data: { webhookId: hook.id } });
    expect(verify(hook.secret, during)).toMatchObject({ type: 'webhook.test' });

    ctx.clock.advance(60_001);
    await ctx.post(`${HOOKS}/${hook.id}/test`, { token: owner.token });
    const after = receiver.received[1]!;
    expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(verify(secret, after)).toMatchObject({ type: 'webhook.test' });
    expect(() => verify(hook.secret, after)).toThrow(/signature/i);

    const again = await ctx.post(`${HOOKS}/${hook.id}/rotate-secret`, { token: owner.token, body: {} });
    expect(again.json().data.previousSecretExpiresAt).toBeNull();
  });

  it('redelivers an event as a new delivery with the same webhook-id', async () => {
    const hook = await subscribe({ events: ['trace.flagged'] });
    await ingestFlagged(ctx, agent);
    await receiver.waitFor(1);
    await expect.poll(async () => (await deliveries(hook.id))[0]?.status).toBe('succeeded');
    const [original] = await deliveries(hook.id);
    const res = await ctx.post(`${HOOKS}/${hook.id}/deliveries/${original!.id}/redeliver`, {
      token: owner.token,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({
      eventId: original!.eventId,
      redeliveryOf: original!.id,
      status: 'succeeded',
      attempts: 1,
    });
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    expect(await deliveries(hook.id)).toHaveLength(2);
    expectErrorEnvelope(
      await ctx.post(`${HOOKS}/${hook.id}/deliveries/${'f'.repeat(24)}/redeliver`, { token: owner.token }),
      404,
      'NOT_FOUND',
    );
  });

  it('checks the SSRF guard again at each delivery', async () => {
    const hook = await subscribe({ events: ['webhook.test'] });
    ctx.config.webhookAllowPrivateNetworks = false;
    try {
      const res = await ctx.post(`${HOOKS}/${hook.id}/test`, { token: owner.token });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ status: 'pending', attempts: 1, responseStatus: null });
      expect(res.json().data.error).toMatch(/loopback, private, link-local or reserved/);
      expect(receiver.received).toHaveLength(0);
    } finally {
      ctx.config.webhookAllowPrivateNetworks = true;
    }
  });

  it('an attempt pending when the application stops is delivered by the next one', async () => {
    const first = await replicaContext(ctx);
    const hook = await subscribe({ events: ['trace.flagged'] }, first);
    receiver.answer({ status: 503 });
    await ingestFlagged(first, agent);
    await receiver.waitFor(1);
    await expect.poll(async () => (await deliveries(hook.id))[0]?.attempts).toBe(1);
    await first.close();
    const second = await replicaContext(ctx);
    try {
      await retryAfter(60_000, second);
      expect(receiver.received).toHaveLength(2);
      expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
      const [delivery] = await deliveries(hook.id);
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2 });
    } finally {
      await second.close();
    }
  });

  it('two workers running their retry passes at once send each attempt exactly once', async () => {
    const hook = await subscribe({ events: ['trace.flagged'] });
    receiver.answer(...Array.from({ length: 20 }, () => ({ status: 500 })));
    await Promise.all(Array.from({ length: 20 }, () => ingestFlagged(ctx, agent)));
    await receiver.waitFor(20);
    await expect
      .poll(
        async () =>
          (await deliveries(hook.id)).filter((d) => d.attempts === 1 && d.status === 'pending').length,
      )
      .toBe(20);
    const other = await replicaContext(ctx);
    try {
      ctx.clock.advance(60_000);
      other.clock.set(ctx.clock.now());
      await Promise.all([
        ctx.service(Outbox).runDue('webhook.deliver'),
        other.service(Outbox).runDue('webhook.deliver'),
      ]);
      await receiver.waitFor(40);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received).toHaveLength(40);
      const retried = receiver.received.slice(20).map((r) => r.headers['webhook-id']);
      expect(new Set(retried).size).toBe(20);
      expect((await deliveries(hook.id)).every((d) => d.status === 'succeeded' && d.attempts === 2)).toBe(
        true,
      );
    } finally {
      await other.close();
    }
  });

  it('a delivery whose process died before its first attempt is sent by the retry pass once its lease expires', async () => {
    const hook = await subscribe({ events: ['review.completed'] });
    const events = ctx.service(DomainEvents);
    const tx = ctx.service(TransactionHost);
    const publication = events.prepare([
      {
        organizationId: owner.organization.id,
        type: 'review.completed',
        agentId: null,
        data: { crash: true },
      },
    ]);
    // Committed, and then the process "dies": the after-commit work (the first attempt) never runs.
    await tx.run(async () => {
      await tx.query(publication.query);
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received).toHaveLength(0);
    const [pending] = await deliveries(hook.id);
    expect(pending).toMatchObject({ status: 'pending', attempts: 0, eventId: publication.rows[0]!.id });
    await retryAfter(30_000);
    expect(receiver.received).toHaveLength(0);
    await retryAfter(31_000);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.headers['webhook-id']).toBe(publication.rows[0]!.id);
    expect(receiver.received[0]!.json).toMatchObject({ type: 'review.completed', data: { crash: true } });
    const [done] = await deliveries(hook.id);
    // The lost first attempt counts.
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });
  });
});
