import {
  type EventOf,
  type GovernanceClient,
  type GovernanceEvent,
  verifyWebhook,
  WebhookVerificationError,
} from '@governance/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import { type ReceivedWebhook, WebhookReceiver } from '../support/webhook-receiver.js';
import { ListeningService, signUp, type SignedUp } from './harness.js';

/** What a receiver does with a delivery: verify the raw body with its headers, then trust the event. */
const verify = (hook: ReceivedWebhook, secrets: string | string[]) =>
  verifyWebhook({ body: hook.body, headers: hook.headers, secrets });

describe('client: webhooks received by a real HTTP receiver and verified with verifyWebhook', () => {
  let service: ListeningService;
  let owner: SignedUp;
  let agent: GovernanceClient;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    service = await ListeningService.start({ config: { webhookAllowPrivateNetworks: true } });
    owner = await signUp(service, 'Hooked');
    const created = await owner.client.post('/api/v1/agents', { body: { name: 'Hooked agent' } });
    agent = service.client({ credentials: { apiKey: created.apiKey } });
    await owner.client.post('/api/v1/policies', {
      body: {
        name: 'Refunds',
        outcome: 'flag',
        conditions: [{ field: 'outputDecision.action', operator: 'equals', value: 'refund' }],
      },
    });
  });
  afterAll(async () => service?.close());
  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
    // Standard Webhooks receivers refuse timestamps more than 5 minutes from their clock: the service's is fixed.
    service.ctx.clock.set(new Date());
  });
  afterEach(async () => {
    await receiver?.close();
    for (const hook of await owner.client.get('/api/v1/webhooks')) {
      await owner.client.delete('/api/v1/webhooks/{id}', { params: { path: { id: hook.id } } });
    }
  });

  it('delivers a flagged trace’s event, which verifies with the webhook’s secret and narrows by type', async () => {
    const hook = await owner.client.post('/api/v1/webhooks', {
      body: { url: receiver.url, events: ['trace.flagged', 'review.completed'] },
    });
    expect(hook.secret).toMatch(/^whsec_/);
    const flagged = await agent.sendTrace({
      inputContext: { prompt: 'Refund order A-1042' },
      outputDecision: { action: 'refund', text: 'Refunding 480 EUR' },
    });
    await receiver.waitFor(1);
    const event = await verify(receiver.received[0]!, hook.secret);
    expectTypeOf(event).toEqualTypeOf<GovernanceEvent>();
    expect(event.id).toBe(receiver.received[0]!.headers['webhook-id']);
    if (event.type !== 'trace.flagged') throw new Error(`unexpected ${event.type}`);
    expectTypeOf(event).toEqualTypeOf<EventOf<'trace.flagged'>>();
    expect(event.data).toMatchObject({ traceId: flagged.trace.id, status: 'flagged' });

    // Someone else's secret, or a body changed on the way, is refused.
    const other = await owner.client.post('/api/v1/webhooks', {
      body: { url: receiver.url, events: ['webhook.test'] },
    });
    await expect(verify(receiver.received[0]!, other.secret)).rejects.toThrow(WebhookVerificationError);
    const tampered = {
      ...receiver.received[0]!,
      body: receiver.received[0]!.body.replace('flagged', 'approved'),
    };
    await expect(verify(tampered, hook.secret)).rejects.toThrow(WebhookVerificationError);
  });

  it('during a secret rotation, deliveries verify with the old secret and with the new one', async () => {
    const hook = await owner.client.post('/api/v1/webhooks', {
      body: { url: receiver.url, events: ['webhook.test'] },
    });
    const rotated = await owner.client.post('/api/v1/webhooks/{id}/rotate-secret', {
      params: { path: { id: hook.id } },
      body: { gracePeriodSeconds: 3600 },
    });
    expect(rotated.secret).not.toBe(hook.secret);
    expect(rotated.previousSecretExpiresAt).not.toBeNull();

    const delivery = await owner.client.post('/api/v1/webhooks/{id}/test', {
      params: { path: { id: hook.id } },
    });
    expect(delivery).toMatchObject({ status: 'succeeded', eventType: 'webhook.test' });
    await receiver.waitFor(1);
    const during = receiver.received[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    // A receiver that still has the old secret, one that has the new one, and one configured with both.
    for (const secrets of [hook.secret, rotated.secret, [rotated.secret, hook.secret]]) {
      const event = await verify(during, secrets);
      expect(event.type).toBe('webhook.test');
    }

    // Once rotated without a grace period, only the newest secret signs.
    const again = await owner.client.post('/api/v1/webhooks/{id}/rotate-secret', {
      params: { path: { id: hook.id } },
      body: { gracePeriodSeconds: 0 },
    });
    await owner.client.post('/api/v1/webhooks/{id}/test', { params: { path: { id: hook.id } } });
    await receiver.waitFor(2);
    const after = receiver.received[1]!;
    await expect(verify(after, again.secret)).resolves.toMatchObject({ type: 'webhook.test' });
    await expect(verify(after, [hook.secret, rotated.secret])).rejects.toThrow(WebhookVerificationError);
  });

  it('the same event keeps its id on a redelivery, so a receiver can deduplicate on event.id', async () => {
    const hook = await owner.client.post('/api/v1/webhooks', {
      body: { url: receiver.url, events: ['webhook.test'] },
    });
    const delivery = await owner.client.post('/api/v1/webhooks/{id}/test', {
      params: { path: { id: hook.id } },
    });
    await owner.client.post('/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', {
      params: { path: { id: hook.id, deliveryId: delivery.id } },
    });
    await receiver.waitFor(2);
    const [first, second] = await Promise.all(
      receiver.received.map((hookCall) => verify(hookCall, hook.secret)),
    );
    expect(second!.id).toBe(first!.id);
    expect(second).toEqual(first);
  });
});
