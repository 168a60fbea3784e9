import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AuditLog,
  Clock,
  JobScheduler,
  Outbox,
  type OutboxDelivery,
  SecretBox,
  sendQueries,
  TransactionHost,
} from '#platform';
import { TestContext } from './support/app.js';
import { replicaHandle } from './support/database.js';

// A topic of this suite's own, declared the way a library declares its topics: by augmenting the typed map.
declare module '#platform' {
  interface OutboxTopics {
    'test.echo': { payload: { n: number; note: string }; secret: { token: string } };
    'test.plain': { payload: { n: number } };
    'test.slow': { payload: { n: number } };
  }
}

interface Row {
  id: string;
  status: string;
  attempts: number;
  sealed: string | null;
  last_error: string | null;
}

describe('outbox', () => {
  let ctx: TestContext;
  let outbox: Outbox;
  let tx: TransactionHost;
  /** What the test handler does with the next attempts: succeed, or fail with this message. */
  let failures: string[] = [];
  const delivered: OutboxDelivery<'test.echo'>[] = [];

  async function row(id: string): Promise<Row | undefined> {
    const result = (await ctx.db.db.execute(
      sql`select id, status, attempts, sealed, last_error from outbox_messages where id = ${id}`,
    )) as unknown as { rows: Row[] };
    return result.rows[0];
  }

  /** The row once its first attempt has ended (sent, failed for good, or pending again with its error). */
  async function settled(id: string): Promise<Row> {
    for (let i = 0; i < 300; i++) {
      const current = await row(id);
      if (current && (current.status !== 'pending' || current.last_error !== null)) return current;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`message ${id} was not attempted`);
  }

  beforeAll(async () => {
    // WORKERS=off: the retry pass is driven by the test.
    ctx = await TestContext.create({ config: { workers: false } });
    outbox = ctx.app.get(Outbox);
    tx = ctx.app.get(TransactionHost);
    outbox.handle('test.echo', {
      maxAttempts: 3,
      backoffMs: [1000, 5000],
      leaseMs: 60_000,
      deliver: async (message) => {
        const failure = failures.shift();
        if (failure) throw new Error(failure);
        delivered.push(message);
      },
    });
  });

  afterAll(async () => {
    await ctx?.close();
  });

  beforeEach(() => {
    failures = [];
    delivered.length = 0;
  });

  it('writes nothing when the transaction rolls back, and delivers after the commit when it commits', async () => {
    await tx
      .run(async () => {
        await outbox.enqueue('test.echo', {
          payload: { n: 1, note: 'rolled back' },
          secret: { token: 't1' },
        });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    const id = await tx.run(() =>
      outbox.enqueue('test.echo', {
        organizationId: 'aaaaaaaaaaaaaaaaaaaaaaaa',
        payload: { n: 2, note: 'committed' },
        secret: { token: 't2' },
      }),
    );
    const done = await settled(id);
    expect(done).toMatchObject({ status: 'sent', attempts: 1, sealed: null, last_error: null });
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({
      id,
      topic: 'test.echo',
      organizationId: 'aaaaaaaaaaaaaaaaaaaaaaaa',
      payload: { n: 2, note: 'committed' },
      secret: { token: 't2' },
      attempt: 1,
    });
    const count = (await ctx.db.db.execute(
      sql`select count(*)::int as n from outbox_messages where payload->>'note' = 'rolled back'`,
    )) as unknown as { rows: { n: number }[] };
    expect(count.rows[0]!.n).toBe(0);
  });

  it('keeps the secret part sealed at rest until the message is sent, then clears it', async () => {
    failures = ['receiver down'];
    const id = await tx.run(() =>
      outbox.enqueue('test.echo', { payload: { n: 3, note: 'sealed' }, secret: { token: 'secret-token-3' } }),
    );
    const failed = await settled(id);
    expect(failed.status).toBe('pending');
    expect(failed.sealed).toMatch(/^v1\./);
    expect(failed.sealed).not.toContain('secret-token-3');
    expect(ctx.app.get(SecretBox).open(failed.sealed!)).toContain('secret-token-3');
    ctx.clock.advance(1000);
    expect(await outbox.runDue('test.echo')).toBe(1);
    expect(await row(id)).toMatchObject({ status: 'sent', attempts: 2, sealed: null, last_error: null });
    expect(delivered.map((m) => m.secret)).toEqual([{ token: 'secret-token-3' }]);
  });

  it('retries a failed attempt after its backoff, and marks the message failed after maxAttempts', async () => {
    failures = ['first', 'second', 'third'];
    const id = await tx.run(() => outbox.enqueue('test.echo', { payload: { n: 4, note: 'flaky' } }));
    expect(await settled(id)).toMatchObject({ status: 'pending', attempts: 1, last_error: 'first' });
    expect(await outbox.runDue('test.echo')).toBe(0); // not due before the first backoff (1 s)
    ctx.clock.advance(1000);
    expect(await outbox.runDue('test.echo')).toBe(1);
    expect(await row(id)).toMatchObject({ status: 'pending', attempts: 2, last_error: 'second' });
    ctx.clock.advance(1000);
    expect(await outbox.runDue('test.echo')).toBe(0); // the second backoff is 5 s
    ctx.clock.advance(4000);
    expect(await outbox.runDue('test.echo')).toBe(1);
    expect(await row(id)).toMatchObject({ status: 'failed', attempts: 3, last_error: 'third' });
    ctx.clock.advance(3_600_000);
    expect(await outbox.runDue('test.echo')).toBe(0);
    expect(delivered).toHaveLength(0);
  });

  it('delivers each message once when retry passes of two replicas run together', async () => {
    failures = Array.from({ length: 10 }, (_, i) => `fail ${i}`);
    const ids = await tx.run(async () => {
      const out: string[] = [];
      for (let n = 0; n < 10; n++)
        out.push(await outbox.enqueue('test.echo', { payload: { n, note: 'race' } }));
      return out;
    });
    for (const id of ids) await settled(id);
    expect(delivered).toHaveLength(0);
    ctx.clock.advance(1000);

    // A second process: its own connections, its own Outbox with the same handler.
    const { handle, close } = await replicaHandle(ctx.db);
    try {
      const replicaTx = new TransactionHost(handle);
      const replica = new Outbox(
        replicaTx,
        ctx.app.get(SecretBox),
        ctx.app.get(Clock),
        new JobScheduler({ workers: false }),
        { outboxRetryIntervalMs: 30_000 },
      );
      replica.handle('test.echo', { deliver: async (m) => void delivered.push(m) });
      await Promise.all([
        outbox.runDue('test.echo'),
        replica.runDue('test.echo'),
        outbox.runDue('test.echo'),
      ]);
    } finally {
      await close();
    }
    const received = delivered.map((m) => m.id).sort();
    expect(received).toEqual([...ids].sort());
    for (const id of ids) expect((await row(id))!.status).toBe('sent');
  });

  it('leases a message while an attempt runs: no second attempt before the lease ends, one after it', async () => {
    const attempts: number[] = [];
    let release!: () => void;
    const firstAttemptHangs = new Promise<void>((resolve) => (release = resolve));
    outbox.handle('test.slow', {
      maxAttempts: 5,
      backoffMs: [1000],
      leaseMs: 10_000,
      deliver: async (message) => {
        attempts.push(message.attempt);
        if (message.attempt === 1) await firstAttemptHangs;
      },
    });
    const id = await tx.run(() => outbox.enqueue('test.slow', { payload: { n: 11 } }));
    for (let i = 0; i < 300 && attempts.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(attempts).toEqual([1]);

    expect(await outbox.runDue('test.slow')).toBe(0);
    ctx.clock.advance(9_999);
    expect(await outbox.runDue('test.slow')).toBe(0);
    expect(attempts).toEqual([1]);

    // The first attempt outlived its lease (a crashed or stuck replica): the message is due again.
    ctx.clock.advance(1);
    expect(await outbox.runDue('test.slow')).toBe(1);
    expect(attempts).toEqual([1, 2]);
    expect(await row(id)).toMatchObject({ status: 'sent', attempts: 2 });
    release();
  });

  it('survives its process: a message left by one process is delivered by the next one to start', async () => {
    // No handler for test.plain in this process: the message waits, as it would after a crash before delivery.
    const id = await tx.run(() => outbox.enqueue('test.plain', { payload: { n: 5 } }));
    await new Promise((r) => setTimeout(r, 50));
    expect(await row(id)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await outbox.runDue()).toBe(0); // this process claims only the topics it handles

    const { handle, close } = await replicaHandle(ctx.db);
    try {
      const next = new Outbox(
        new TransactionHost(handle),
        ctx.app.get(SecretBox),
        ctx.app.get(Clock),
        new JobScheduler({ workers: false }),
        { outboxRetryIntervalMs: 30_000 },
      );
      const seen: number[] = [];
      next.handle('test.plain', { deliver: async (m) => void seen.push(m.payload.n) });
      expect(await next.runDue()).toBe(1);
      expect(seen).toEqual([5]);
    } finally {
      await close();
    }
    expect(await row(id)).toMatchObject({ status: 'sent', attempts: 1 });
  });

  it('enqueues in a pipelined transaction as one more query of the same round trip, then dispatches', async () => {
    const { query, pending } = outbox.enqueueQuery('test.echo', [
      { payload: { n: 6, note: 'pipelined' } },
      { payload: { n: 7, note: 'pipelined' } },
      { payload: { n: 8, note: 'held' }, hold: true },
    ]);
    await tx.pipelined((send) => sendQueries(send, [query] as const, { commit: true }));
    expect(pending).toHaveLength(2);
    await outbox.dispatch(pending);
    expect(delivered.map((m) => m.payload.n).sort()).toEqual([6, 7]);
    const held = (await ctx.db.db.execute(
      sql`select status from outbox_messages where payload->>'note' = 'held'`,
    )) as unknown as { rows: { status: string }[] };
    expect(held.rows).toEqual([{ status: 'stored' }]);
  });

  it('registers its retry pass and its purge with the job scheduler', () => {
    expect(ctx.app.get(JobScheduler).names).toEqual(
      expect.arrayContaining(['outbox', 'outbox-purge', 'revoked-tokens-purge']),
    );
  });

  it('purges sent messages after a week, and keeps pending, held and failed ones', async () => {
    const sentId = await tx.run(() => outbox.enqueue('test.echo', { payload: { n: 9, note: 'old, sent' } }));
    expect(await settled(sentId)).toMatchObject({ status: 'sent' });
    const heldId = await tx.run(() =>
      outbox.enqueue('test.echo', { payload: { n: 10, note: 'old, held' }, hold: true }),
    );
    const waitingId = await tx.run(() => outbox.enqueue('test.plain', { payload: { n: 11 } }));
    const failed = (await ctx.db.db.execute(
      sql`select id from outbox_messages where status = 'failed' limit 1`,
    )) as unknown as { rows: { id: string }[] };
    expect(failed.rows).toHaveLength(1); // the message of the maxAttempts test
    ctx.clock.advance(6 * 24 * 3600 * 1000);
    await ctx.app.get(JobScheduler).runNow('outbox-purge');
    expect(await row(sentId)).toBeDefined();
    ctx.clock.advance(2 * 24 * 3600 * 1000);
    await ctx.app.get(JobScheduler).runNow('outbox-purge');
    expect(await row(sentId)).toBeUndefined();
    expect(await row(heldId)).toMatchObject({ status: 'stored' });
    expect(await row(waitingId)).toMatchObject({ status: 'pending' });
    expect(await row(failed.rows[0]!.id)).toMatchObject({ status: 'failed' });
  });

  it('types messages by topic: a misspelt topic or another topic’s payload does not compile', () => {
    const typeOnly = () => {
      // @ts-expect-error: no such topic
      void outbox.enqueue('test.ecoh', { payload: { n: 1, note: '' } });
      // @ts-expect-error: test.plain's payload has no note, and test.echo needs one
      void outbox.enqueue('test.echo', { payload: { n: 1 } });
      // @ts-expect-error: test.plain has no secret part
      void outbox.enqueue('test.plain', { payload: { n: 1 }, secret: { token: 'x' } });
    };
    expect(typeof typeOnly).toBe('function');
  });

  describe('AuditLog.record with the event map', () => {
    it('writes the audit entry and the event the map declares in one transaction, and neither on rollback', async () => {
      const audit = ctx.app.get(AuditLog);
      audit.publishes('test.happened', 'test.plain', (entry) => ({
        organizationId: entry.organizationId,
        payload: { n: entry.sequence },
      }));
      audit.publishes('test.quiet', 'test.plain', () => null);
      const owner = await ctx.register();
      const orgId = owner.organization.id;
      const who = { organizationId: orgId, actor: { type: 'system' as const, id: null, email: null } };

      await tx
        .run(async () => {
          await audit.record(who, 'test.happened', { type: 'thing', id: 'x1' }, { attempt: 'rolled back' });
          throw new Error('roll back');
        })
        .catch(() => undefined);
      const entry = await audit.record(
        who,
        'test.happened',
        { type: 'thing', id: 'x2' },
        { attempt: 'kept' },
      );
      await audit.record(who, 'test.quiet', null);

      const entries = (await ctx.db.db.execute(
        sql`select event_type, target_type, target_id, metadata, sequence from audit_entries
            where organization_id = ${orgId} and event_type like 'test.%' order by sequence`,
      )) as unknown as { rows: Record<string, unknown>[] };
      expect(entries.rows).toEqual([
        expect.objectContaining({
          event_type: 'test.happened',
          target_type: 'thing',
          target_id: 'x2',
          metadata: { attempt: 'kept' },
        }),
        expect.objectContaining({ event_type: 'test.quiet', target_type: null, target_id: null }),
      ]);
      const events = (await ctx.db.db.execute(
        sql`select topic, organization_id, payload from outbox_messages where organization_id = ${orgId}`,
      )) as unknown as { rows: Record<string, unknown>[] };
      expect(events.rows).toEqual([
        { topic: 'test.plain', organization_id: orgId, payload: { n: Number(entry.sequence) } },
      ]);
    });
  });
});
