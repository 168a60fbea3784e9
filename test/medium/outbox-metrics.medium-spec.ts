/**
 * The outbox's metrics (platform outbox) on a real database, with a second process of the application on the same
 * database: attempts by topic and result; a message the retry pass claimed but another process leased first, counted
 * as the outbox job's lost claim; the backlog gauges, read through the outbox's own statement at scrape time at most
 * every 5 s by the clock, a topic shown at 0 once it has nothing pending, and the last values kept when a read fails.
 */
import { Logger } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  Metrics,
  type NewOutboxMessage,
  Outbox,
  type OutboxTopic,
  sendQueries,
  TransactionHost,
} from '#platform';
import { compileTestModule, testConfig } from '../support/app.js';
import { replicaHandle, shareHandle } from '../support/database.js';
import { MediumContext } from '../support/medium.js';
import { Exposition } from '../support/metrics-scrape.js';

// This file's topic, declared as a library declares its own.
declare module '#platform' {
  interface OutboxTopics {
    'medium.metrics': { payload: { n: number } };
  }
}

const NOW = '2026-04-01T08:00:00.000Z';
const TOPIC = { topic: 'medium.metrics' };

describe('Outbox metrics: attempts, lost claims and the backlog', () => {
  let ctx: MediumContext;
  let second: TestingModule;
  let outbox: Outbox;
  let secondOutbox: Outbox;
  let host: TransactionHost;
  /** Messages whose attempts fail, by payload number. */
  const failing = new Set<number>();

  /** Commits messages without delivering them: only a claim attempts them. */
  async function enqueue<T extends OutboxTopic>(topic: T, messages: NewOutboxMessage<T>[]) {
    const { query, pending } = outbox.enqueueQuery(topic, messages);
    await host.pipelined((send) => sendQueries(send, [query] as const, { commit: true }));
    return pending;
  }

  /** A process's sample, 0 when its series does not exist yet. */
  async function sample(process: Metrics, name: string, labels: Record<string, string>): Promise<number> {
    return new Exposition(await process.text()).value(name, labels) ?? 0;
  }

  beforeAll(async () => {
    ctx = await MediumContext.create({ now: NOW });
    outbox = ctx.service(Outbox);
    host = ctx.service(TransactionHost);
    const replica = await replicaHandle(ctx.db);
    const db = replica.handle === ctx.db ? shareHandle(ctx.db) : replica.handle;
    second = await compileTestModule({ config: testConfig({ workers: false }), db, clock: ctx.clock });
    await second.init();
    secondOutbox = second.get(Outbox);
    for (const process of [outbox, secondOutbox]) {
      process.handle('medium.metrics', {
        deliver: async (message) => {
          if (failing.has(message.payload.n)) throw new Error('receiver down');
        },
      });
    }
  });
  afterAll(async () => {
    await second?.close();
    await ctx?.close();
  });

  it('counts attempts by topic and result in the process that made them, and a claim another process leased first as lost', async () => {
    const main = ctx.service(Metrics);
    const other = second.get(Metrics);
    const attempts = (process: Metrics, result: string) =>
      sample(process, 'governance_outbox_attempts_total', { ...TOPIC, result });
    const lost = (process: Metrics) => sample(process, 'governance_job_claims_lost_total', { job_name: 'outbox' });
    failing.add(3);
    const refs = await enqueue(
      'medium.metrics',
      [1, 2, 3].map((n) => ({ payload: { n } })),
    );
    // Between this process's claim and its leases, the other process delivers the first message.
    const dispatch = outbox.dispatchConcurrently.bind(outbox);
    const race = vi
      .spyOn(outbox, 'dispatchConcurrently')
      .mockImplementationOnce(async (claimed, concurrency) => {
        await secondOutbox.dispatch(claimed.filter((ref) => ref.id === refs[0]!.id));
        return dispatch(claimed, concurrency);
      });
    try {
      expect(await outbox.runDue('medium.metrics')).toBe(3);
    } finally {
      race.mockRestore();
    }
    expect(await attempts(main, 'success')).toBe(1);
    expect(await attempts(main, 'failure')).toBe(1);
    expect(await lost(main)).toBe(1);
    expect(await attempts(other, 'success')).toBe(1);
    expect(await attempts(other, 'failure')).toBe(0);
    expect(await lost(other)).toBe(0);
  });

  it('reads the backlog at most every 5 s by the clock, shows a topic at 0 once nothing is pending, and keeps its values when a read fails', async () => {
    const metrics = ctx.service(Metrics);
    const backlog = async () => {
      const families = new Exposition(await metrics.text());
      return {
        pending: families.value('governance_outbox_backlog', TOPIC),
        oldestDueAge: families.value('governance_outbox_oldest_due_age_seconds', TOPIC),
      };
    };
    ctx.clock.advance(60_000);
    // The failed message of the test before is due again 30 s after its attempt: 30 s ago.
    expect(await backlog()).toEqual({ pending: 1, oldestDueAge: 30 });
    failing.clear();
    await enqueue('medium.metrics', [{ payload: { n: 4 } }]);
    // Read 5 s ago at most: the cached values.
    ctx.clock.advance(4_999);
    expect(await backlog()).toEqual({ pending: 1, oldestDueAge: 30 });
    ctx.clock.advance(1);
    expect(await backlog()).toEqual({ pending: 2, oldestDueAge: 35 });

    const warn = vi.spyOn(Logger.prototype, 'warn');
    const down = vi.spyOn(host, 'db', 'get').mockImplementation(() => {
      throw new Error('database unavailable');
    });
    try {
      for (let i = 0; i < 2; i++) {
        ctx.clock.advance(5_000);
        expect(await backlog()).toEqual({ pending: 2, oldestDueAge: 35 });
      }
      expect(warn.mock.calls.filter(([, message]) => String(message).includes('backlog'))).toHaveLength(1);
    } finally {
      down.mockRestore();
      warn.mockRestore();
    }

    expect(await outbox.runDue('medium.metrics')).toBe(2);
    ctx.clock.advance(5_000);
    expect(await backlog()).toEqual({ pending: 0, oldestDueAge: 0 });
  });
});
