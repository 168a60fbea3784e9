import type { AddressInfo } from 'node:net';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { JobScheduler } from '#platform';
import { WEBHOOK_EVENTS } from '../libs/governance/src/webhooks/webhook-events.js';
import { type Registered, TestContext } from './support/app.js';
import type { TestAgent } from './support/builders.js';
import { workspaceKey } from './support/cpi-suite.js';
import { friaIn } from './support/fria-suite.js';
import { validatorsOf } from './support/openapi-schemas.js';
import {
  ingestFlagged,
  ingestManyFlagged,
  PATTERNS,
  QUEUE,
  refundFlagPolicy,
} from './support/review-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

type Json = Record<string, unknown>;
interface Received {
  channel: string;
  event: Json;
}

const ALERT_INTERVAL_MS = 60_000;

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('events against their schemas in the served OpenAPI document', () => {
  let ctx: TestContext;
  let receiver: WebhookReceiver;
  let owner: Registered;
  let agent: TestAgent;
  let base: string;
  let document: {
    components: { schemas: Record<string, Json> };
    webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: Json }> } } }>;
  };
  const streamed: Received[] = [];
  let source: EventSource | undefined;
  let socket: WebSocket | undefined;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    ctx = await TestContext.create({
      config: { webhookAllowPrivateNetworks: true, workers: false, alertIntervalMs: ALERT_INTERVAL_MS },
    });
    owner = await ctx.register({ organizationName: 'Event makers' });
    await ctx.setPlan(owner.organization.id, 'custom');
    agent = await ctx.newAgent(owner.organization.id, 'Refund bot');
    await refundFlagPolicy(ctx, owner.organization.id, []);
    await ctx.newPolicy(owner.organization.id, {
      name: 'No card numbers',
      outcome: 'block',
      agentIds: [],
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'card number' }],
    });
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
    document = (await ctx.get('/docs/openapi.json')).json();
  });
  afterAll(async () => {
    source?.close();
    socket?.close();
    await ctx?.close();
    await receiver?.close();
  });

  const streamToken = async () => {
    const res = await ctx.post('/api/v1/auth/stream-token', { token: owner.token });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.token as string;
  };

  it('describes every event the service names, each as a webhook whose body is its schema', () => {
    const union = document.components.schemas.GovernanceEvent as {
      oneOf: { $ref: string }[];
      discriminator: { propertyName: string; mapping: Record<string, string> };
    };
    expect(Object.keys(union.discriminator.mapping).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    expect(union.discriminator.propertyName).toBe('type');
    expect(union.oneOf.map((r) => r.$ref).sort()).toEqual(Object.values(union.discriminator.mapping).sort());
    expect(Object.keys(document.webhooks).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    for (const type of WEBHOOK_EVENTS) {
      const schema = document.webhooks[type]!.post.requestBody.content['application/json']!.schema;
      expect(schema).toEqual({ $ref: union.discriminator.mapping[type] });
      const name = union.discriminator.mapping[type]!.split('/').pop()!;
      expect(document.components.schemas[name]!.properties).toMatchObject({ type: { enum: [type] } });
    }
  });

  it('sends every event type to a webhook, the SSE stream and the WebSocket as its schema says', async () => {
    // A webhook of every event, and both streams.
    const hook = await ctx.post('/api/v1/webhooks', {
      token: owner.token,
      body: { url: receiver.url, events: [...WEBHOOK_EVENTS] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const webhookId = hook.json().data.id as string;
    source = new EventSource(`${base}/api/v1/events/stream?token=${await streamToken()}`);
    for (const type of WEBHOOK_EVENTS) {
      source.addEventListener(type, (e) => {
        const event = JSON.parse(e.data) as Json;
        streamed.push({ channel: `SSE (id ${e.lastEventId})`, event });
        if (!/^[0-9a-f]{24}$/.test(e.lastEventId) || e.type !== event.type) {
          streamed.push({
            channel: 'SSE frame',
            event: { type: 'bad frame', id: e.lastEventId, event: e.type },
          });
        }
      });
    }
    await new Promise<void>((resolve, reject) => {
      source!.onopen = () => resolve();
      setTimeout(() => reject(new Error('the SSE stream did not open')), 5000);
    });
    socket = new WebSocket(`${base.replace('http', 'ws')}/api/v1/events/ws?token=${await streamToken()}`);
    socket.on('message', (raw) => streamed.push({ channel: 'WebSocket', event: JSON.parse(raw.toString()) }));
    await new Promise<void>((resolve, reject) => {
      socket!.on('open', () => resolve());
      socket!.on('error', reject);
    });

    // trace.approved, trace.blocked, trace.flagged
    const approved = await ctx.post(TRACES, {
      apiKey: agent.key,
      body: traceBody({}, { prompt: 'When does the shop open on Sundays?' }),
    });
    expect(approved.statusCode, approved.body).toBe(201);
    const blocked = await ctx.post(TRACES, {
      apiKey: agent.key,
      body: traceBody({}, { prompt: 'Read me the card number on file' }),
    });
    expect(blocked.statusCode, blocked.body).toBe(403);
    // review.completed (a reviewer), review.escalated, review.completed (rejected after escalation)
    const first = await ingestFlagged(ctx, agent);
    const decide = (id: string, decision: string) =>
      ctx.post(`${QUEUE}/${id}/decision`, { token: owner.token, body: { decision, notes: 'Checked.' } });
    expect((await decide(first.reviewItemId, 'approve')).statusCode).toBe(200);
    const second = await ingestFlagged(ctx, agent);
    expect((await decide(second.reviewItemId, 'escalate')).statusCode).toBe(200);
    expect((await decide(second.reviewItemId, 'reject')).statusCode).toBe(200);
    // cpi.approved, with review.completed by feedback (the item was pending); cpi.corrected
    const key = await workspaceKey(ctx, owner);
    const third = await ingestFlagged(ctx, agent);
    const feedback = (body: Json) => ctx.post('/api/v1/cpi/ingest', { apiKey: key.key, body });
    const cpiApproved = await feedback({
      traceId: third.traceId,
      action: 'approve',
      userEmail: 'ada@example.com',
    });
    expect(cpiApproved.statusCode, cpiApproved.body).toBe(200);
    const cpiCorrected = await feedback({
      traceId: approved.json().data.id,
      correctedDecision: { decision: 'offer_replacement', confidence: 0.8 },
      feedbackNotes: 'A replacement, not a refund.',
    });
    expect(cpiCorrected.statusCode, cpiCorrected.body).toBe(200);
    // fria.approved
    await friaIn(ctx, owner.token, 'approved', 'Credit scoring');
    // compliance.mapping.updated
    const mapped = await ctx.patch('/api/v1/compliance/mapping', {
      token: owner.token,
      body: {
        framework: 'iso-42001',
        clauseId: '6.1.4',
        status: 'partial',
        evidence: 'Done for one system.',
      },
    });
    expect(mapped.statusCode, mapped.body).toBe(200);
    // audit.checkpoint
    const checkpoint = await ctx.post('/api/v1/audit/checkpoints', { token: owner.token });
    expect(checkpoint.statusCode, checkpoint.body).toBe(201);
    // webhook.test
    const tested = await ctx.post(`/api/v1/webhooks/${webhookId}/test`, { token: owner.token });
    expect(tested.statusCode, tested.body).toBe(200);
    // alert.triggered, then alert.resolved once the window holds no trace
    const alert = await ctx.post('/api/v1/alerts', {
      token: owner.token,
      body: { name: 'Any traffic', metric: 'trace_volume', comparison: 'gt', threshold: 0, windowMinutes: 5 },
    });
    expect(alert.statusCode, alert.body).toBe(201);
    await ctx.app.get(JobScheduler).runNow('alerts');
    ctx.clock.advance(10 * 60_000);
    await ctx.app.get(JobScheduler).runNow('alerts');
    // trace.approved by a signed-off approval pattern (`autoApprovedBy`): 50 approvals make a pattern
    const auto = await ctx.newAgent(owner.organization.id, 'Auto-approved bot');
    const items = await ingestManyFlagged(ctx, auto, 50);
    const bulk = await ctx.post(`${QUEUE}/bulk-decision`, {
      token: owner.token,
      body: { ids: items.map((i) => i.reviewItemId), decision: 'approve' },
    });
    expect(bulk.json().data.failed, bulk.body).toEqual([]);
    const [pattern] = (await ctx.get(PATTERNS, { token: owner.token, query: { agentId: auto.id } })).json()
      .data;
    expect((await ctx.post(`${PATTERNS}/${pattern.id}/signoff`, { token: owner.token })).statusCode).toBe(
      200,
    );
    const autoApproved = await ctx.post(TRACES, {
      apiKey: auto.key,
      body: traceBody({}, { prompt: 'Please refund order 42' }, { action: 'issue_refund' }),
    });
    expect(autoApproved.statusCode, autoApproved.body).toBe(201);

    // Every type on every channel; the auto-approved trace's event last of all.
    const types = (channel: string) =>
      new Set(
        channel === 'webhook'
          ? receiver.received.map((r) => r.json.type)
          : streamed.filter((r) => r.channel.startsWith(channel)).map((r) => r.event.type),
      );
    const autoApprovedEvent = (r: { event: Json }) => (r.event.data as Json)?.autoApprovedBy !== undefined;
    await until(
      () =>
        WEBHOOK_EVENTS.every((t) => types('webhook').has(t)) &&
        receiver.received.some((r) => autoApprovedEvent({ event: r.json as unknown as Json })),
      'every event type at the webhook',
    );
    for (const channel of ['SSE', 'WebSocket']) {
      await until(
        () =>
          WEBHOOK_EVENTS.every((t) => types(channel).has(t)) &&
          streamed.some((r) => r.channel.startsWith(channel) && autoApprovedEvent(r)),
        `every event type on ${channel}`,
      );
    }

    const schemas = validatorsOf(document);
    const union = schemas.of('GovernanceEvent');
    const names = (
      document.components.schemas.GovernanceEvent as { discriminator: { mapping: Record<string, string> } }
    ).discriminator.mapping;
    const received: Received[] = [
      ...receiver.received.map((r) => ({
        channel: `webhook ${String(r.headers['webhook-id'])}`,
        event: r.json as unknown as Json,
      })),
      ...streamed,
    ];
    const problems: string[] = [];
    for (const { channel, event } of received) {
      const type = String(event.type);
      const text = JSON.stringify(event);
      const name = names[type]?.split('/').pop();
      const validate = name ? schemas.of(name) : undefined;
      if (!validate) problems.push(`${channel}: ${text} is of no documented type`);
      else if (!validate(event)) {
        problems.push(`${channel} ${type}: ${schemas.ajv.errorsText(validate.errors)} in ${text}`);
      } else if (!union(event)) {
        problems.push(`${channel} ${type}: not one GovernanceEvent: ${schemas.ajv.errorsText(union.errors)}`);
      }
    }
    expect(problems).toEqual([]);
    // The webhook's id header and the WebSocket message's id are event ids; SSE carries it in `id:` (checked above).
    for (const hook of receiver.received) expect(hook.headers['webhook-id']).toMatch(/^[0-9a-f]{24}$/);
    expect(
      streamed.filter((r) => r.channel === 'WebSocket').every((r) => typeof r.event.id === 'string'),
    ).toBe(true);
    expect(received.length).toBeGreaterThan(3 * WEBHOOK_EVENTS.length);
  }, 180_000);
});
