import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainEvents, JobScheduler, Outbox, TransactionHost } from '#platform';
import { domainEvents } from '../../libs/platform/src/events/domain-event.schema.js';
import { outboxMessages } from '../../libs/platform/src/outbox/outbox.schema.js';
import { WebhookDeliveryWorker } from '../../libs/governance/src/webhooks/webhook-delivery.worker.js';
import { webhookDeliveries, webhooks } from '../../libs/governance/src/webhooks/webhook.schema.js';
import type { TestOrganization } from '../support/builders.js';
import { MediumContext } from '../support/medium.js';

const DAY = 24 * 3600 * 1000;

describe('DomainEvents with the outbox and the webhook fan-out', () => {
  let ctx: MediumContext;
  let org: TestOrganization;
  let events: DomainEvents;
  let tx: TransactionHost;

  beforeAll(async () => {
    ctx = await MediumContext.create();
    org = await ctx.newOrganization({ organizationName: 'Events Org' });
    events = ctx.service(DomainEvents);
    tx = ctx.service(TransactionHost);
  });
  afterAll(async () => ctx?.close());

  const event = (type = 'review.completed') => ({
    organizationId: org.id,
    type,
    agentId: null,
    data: { n: 1 },
  });
  const fanoutsOf = async (ids: string[]) =>
    (await ctx.db.db.select().from(outboxMessages).where(eq(outboxMessages.topic, 'events.fanout'))).filter(
      (m) => (m.payload as { ids: string[] }).ids.some((id) => ids.includes(id)),
    );

  it('a rolled-back change publishes nothing: no event, no fan-out message', async () => {
    let ids: string[] = [];
    await expect(
      tx.run(async () => {
        ids = (await events.publish([event(), event()])).map((e) => e.id);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(ids).toHaveLength(2);
    expect(await ctx.db.db.select().from(domainEvents).where(inArray(domainEvents.id, ids))).toEqual([]);
    expect(await fanoutsOf(ids)).toEqual([]);
  });

  it('a committed change writes its events and one fan-out message, which creates each delivery once', async () => {
    const now = ctx.clock.now();
    await ctx.db.db.insert(webhooks).values({
      id: 'a'.repeat(24),
      organizationId: org.id,
      url: 'https://93.184.215.14/hook',
      events: ['review.completed'],
      filterAgentId: null,
      description: null,
      isActive: true,
      disabledReason: null,
      secretSealed: 'x',
      previousSecretSealed: null,
      previousSecretExpiresAt: null,
      createdBy: null,
      createdAt: now,
      updatedAt: now,
    });
    await tx.run(() => ctx.service(WebhookDeliveryWorker).announceChange(org.id));
    const published = await events.publish([event(), event('trace.approved')]);
    const ids = published.map((e) => e.id);
    expect(await ctx.db.db.select().from(domainEvents).where(inArray(domainEvents.id, ids))).toHaveLength(2);
    await expect.poll(async () => (await fanoutsOf(ids))[0]?.status).toBe('sent');
    // A fan-out run again (a retry after a crash) adds no delivery.
    const [fanout] = await fanoutsOf(ids);
    await ctx.db.db
      .update(outboxMessages)
      .set({ status: 'pending', nextAttemptAt: ctx.clock.now() })
      .where(eq(outboxMessages.id, fanout!.id));
    await ctx.service(Outbox).runDue('events.fanout');
    await expect.poll(async () => (await fanoutsOf(ids))[0]?.status).toBe('sent');
    const deliveries = await ctx.db.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.organizationId, org.id), inArray(webhookDeliveries.eventId, ids)));
    expect(deliveries.map((d) => d.eventType)).toEqual(['review.completed']);
  });

  it('purges events older than EVENT_RETENTION_DAYS (30 by default) and keeps the rest', async () => {
    const [old] = await events.publish([event()]);
    ctx.clock.advance(20 * DAY);
    const [recent] = await events.publish([event()]);
    ctx.clock.advance(11 * DAY);
    await ctx.service(JobScheduler).runNow('events-purge');
    const left = await ctx.db.db
      .select({ id: domainEvents.id })
      .from(domainEvents)
      .where(inArray(domainEvents.id, [old!.id, recent!.id]));
    expect(left.map((r) => r.id)).toEqual([recent!.id]);
  });
});
