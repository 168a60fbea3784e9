import { and, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog, DomainEvents, JobScheduler, SecretBox, TransactionHost } from '#platform';
import { domainEvents } from '../../libs/platform/src/events/domain-event.schema.js';
import { outboxMessages } from '../../libs/platform/src/outbox/outbox.schema.js';
import { webhookDeliveries, webhooks } from '../../libs/governance/src/webhooks/webhook.schema.js';
import type { TestOrganization } from '../support/builders.js';
import { MediumContext } from '../support/medium.js';

const DAY = 24 * 3600 * 1000;

describe('DomainEvents with the webhook deliveries planned in the same transaction', () => {
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
  it('a rolled-back change publishes nothing', async () => {
    let ids: string[] = [];
    await expect(
      tx.run(async () => {
        ids = (await events.publish([event(), event()])).map((e) => e.id);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(ids).toHaveLength(2);
    expect(await ctx.db.db.select().from(domainEvents).where(inArray(domainEvents.id, ids))).toEqual([]);
  });

  it('a committed change writes its events and, in the same transaction, a delivery per matching webhook', async () => {
    const now = ctx.clock.now();
    const hook = (id: string, events: string[], isActive = true) => ({
      id,
      organizationId: org.id,
      url: 'http://127.0.0.1:9/hook',
      events,
      filterAgentId: null,
      description: null,
      isActive,
      disabledReason: null,
      secretSealed: ctx.service(SecretBox).seal('whsec_' + Buffer.alloc(32, 7).toString('base64')),
      previousSecretSealed: null,
      previousSecretExpiresAt: null,
      createdBy: null,
      createdAt: now,
      updatedAt: now,
    });
    await ctx.db.db
      .insert(webhooks)
      .values([
        hook('a'.repeat(24), ['review.completed']),
        hook('b'.repeat(24), ['review.completed', 'trace.approved']),
        hook('c'.repeat(24), ['review.completed'], false),
      ]);
    let rolledBack: string[] = [];
    await expect(
      tx.run(async () => {
        rolledBack = (await events.publish([event()])).map((e) => e.id);
        throw new Error('undone');
      }),
    ).rejects.toThrow('undone');
    const published = await events.publish([event(), event('trace.approved')]);
    const ids = [...published.map((e) => e.id), ...rolledBack];
    const deliveries = await ctx.db.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.organizationId, org.id), inArray(webhookDeliveries.eventId, ids)));
    expect(deliveries.map((d) => `${d.webhookId.slice(0, 1)} ${d.eventType}`).sort()).toEqual([
      'a review.completed',
      'b review.completed',
      'b trace.approved',
    ]);
    const attempts = await ctx.db.db
      .select()
      .from(outboxMessages)
      .where(eq(outboxMessages.topic, 'webhook.deliver'));
    const delivered = new Set(attempts.map((m) => (m.payload as { deliveryId: string }).deliveryId));
    expect(deliveries.every((d) => delivered.has(d.id))).toBe(true);
    // The first attempts run after the commit (port 9 refuses): each is recorded as failed once, to be retried.
    await expect
      .poll(async () =>
        (
          await ctx.db.db
            .select()
            .from(webhookDeliveries)
            .where(
              inArray(
                webhookDeliveries.id,
                deliveries.map((d) => d.id),
              ),
            )
        ).every((d) => d.attempts === 1 && d.status === 'pending' && d.error !== null),
      )
      .toBe(true);
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

  it('serves a trace’s audit entry as its event, merged in time order with stored events, within the retention', async () => {
    const audit = ctx.service(AuditLog);
    const subject = { organizationId: org.id, actor: { type: 'system' as const, id: null, email: null } };
    const first = await audit.record(
      subject,
      'trace.flagged',
      { type: 'trace', id: 'a'.repeat(24) },
      {
        agentId: 'b'.repeat(24),
        confidence: 0.4,
        policyIds: ['c'.repeat(24)],
        reviewItemId: 'd'.repeat(24),
      },
    );
    ctx.clock.advance(1000);
    const [stored] = await events.publish([event()]);
    ctx.clock.advance(1000);
    const third = await audit.record(
      subject,
      'trace.auto_approved',
      { type: 'trace', id: 'e'.repeat(24) },
      {
        agentId: 'b'.repeat(24),
        confidence: 0.9,
        policyIds: [],
        autoApprovedBy: 'f'.repeat(24),
      },
    );
    expect(await events.get(org.id, first.id)).toEqual({
      id: first.id,
      organizationId: org.id,
      type: 'trace.flagged',
      agentId: 'b'.repeat(24),
      createdAt: first.createdAt,
      data: {
        traceId: 'a'.repeat(24),
        agentId: 'b'.repeat(24),
        status: 'flagged',
        confidence: 0.4,
        policyIds: ['c'.repeat(24)],
        reviewItemId: 'd'.repeat(24),
      },
    });
    const replay = await events.after(org.id, first.id, new Date(ctx.clock.nowMs() - DAY), 10);
    expect(replay.map((e) => [e.id, e.type])).toEqual([
      [stored!.id, 'review.completed'],
      [third.id, 'trace.approved'],
    ]);
    expect(replay[1]!.data).toMatchObject({ status: 'approved', autoApprovedBy: 'f'.repeat(24) });
    // Another organization's entry is not its event; an entry past the retention is no longer one.
    const other = await ctx.newOrganization({ organizationName: 'Other events' });
    expect(await events.get(other.id, first.id)).toBeNull();
    ctx.clock.advance(31 * DAY);
    expect(await events.get(org.id, first.id)).toBeNull();
  });
});
