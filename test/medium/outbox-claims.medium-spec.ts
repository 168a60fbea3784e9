/**
 * The outbox's claims (platform outbox) on a real database, with a second process of the application on the same
 * database: a process claims only the topics it handles; a leased message is not claimed again, by either process,
 * until its lease ends; two processes claiming at once deliver each message once; `FOR UPDATE SKIP LOCKED` passes
 * over rows another transaction holds (PostgreSQL only); the backoff after a failure, an `OutboxRetry`'s own delay,
 * the failed state after `maxAttempts`; the secret part cleared once sent. Messages are written through
 * `enqueueQuery` in a pipelined transaction, which delivers nothing by itself, so each attempt here comes from a
 * claim (`runDue`) the test makes, at a time the test sets on the shared FixedClock.
 */
import type { TestingModule } from '@nestjs/testing';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type NewOutboxMessage,
  Outbox,
  type OutboxDelivery,
  type OutboxListing,
  OutboxRetry,
  type OutboxTopic,
  sendQueries,
  TransactionHost,
} from '#platform';
import { compileTestModule, testConfig } from '../support/app.js';
import { replicaHandle, shareHandle } from '../support/database.js';
import { MediumContext } from '../support/medium.js';

// This file's topics, declared as a library declares its own.
declare module '#platform' {
  interface OutboxTopics {
    'medium.claims': { payload: { n: number } };
    'medium.sealed': { payload: { n: number }; secret: { token: string } };
    'medium.elsewhere': { payload: { n: number } };
  }
}

const NOW = '2026-04-01T08:00:00.000Z';
const LEASE_MS = 10_000;
const BACKOFF_MS = [1_000, 5_000];
const MAX_ATTEMPTS = 3;
const onPostgres = inject('databaseMode') === 'postgres';

type Process = 'main' | 'second';
interface Attempt {
  process: Process;
  id: string;
  n: number;
  attempt: number;
}

describe('Outbox claims: topics, leases, concurrent claimers, backoff and the failed state', () => {
  let ctx: MediumContext;
  let second: TestingModule;
  let outbox: Outbox;
  let secondOutbox: Outbox;
  let host: TransactionHost;
  /** Every attempt any handler of this file saw, in order. */
  const attempts: Attempt[] = [];
  /** What the handlers do with an attempt; each test sets it. */
  let behaviour: (message: OutboxDelivery<'medium.claims'>) => Promise<void> = async () => undefined;
  const sealedSeen: (string | undefined)[] = [];

  /** Commits messages without delivering them: only a claim attempts them. */
  async function enqueue<T extends OutboxTopic>(
    topic: T,
    messages: NewOutboxMessage<T>[],
  ): Promise<string[]> {
    const { query, pending } = outbox.enqueueQuery(topic, messages);
    await host.pipelined((send) => sendQueries(send, [query] as const, { commit: true }));
    return pending.map((message) => message.id);
  }
  const numbered = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({ payload: { n: from + i } }));

  /** The message as the operator listing shows it, its secret part unsealed. */
  async function state(id: string): Promise<OutboxListing> {
    const found = (await outbox.list(1000, { withSecret: true })).find((message) => message.id === id);
    if (!found) throw new Error(`no message ${id}`);
    return found;
  }
  const attemptsOf = (id: string) => attempts.filter((a) => a.id === id).map((a) => a.attempt);

  beforeAll(async () => {
    ctx = await MediumContext.create({ now: NOW });
    outbox = ctx.service(Outbox);
    host = ctx.service(TransactionHost);
    // A second process of the application: on PostgreSQL its own pool on the same database, on PGlite the same
    // handle (one connection, shared). Same clock, its own handlers.
    const replica = await replicaHandle(ctx.db);
    const db = replica.handle === ctx.db ? shareHandle(ctx.db) : replica.handle;
    second = await compileTestModule({ config: testConfig({ workers: false }), db, clock: ctx.clock });
    await second.init();
    secondOutbox = second.get(Outbox);

    const handler = (process: Process) => ({
      maxAttempts: MAX_ATTEMPTS,
      backoffMs: BACKOFF_MS,
      leaseMs: LEASE_MS,
      deliver: async (message: OutboxDelivery<'medium.claims'>) => {
        attempts.push({ process, id: message.id, n: message.payload.n, attempt: message.attempt });
        await behaviour(message);
      },
    });
    outbox.handle('medium.claims', handler('main'));
    secondOutbox.handle('medium.claims', handler('second'));
    outbox.handle('medium.sealed', {
      maxAttempts: MAX_ATTEMPTS,
      backoffMs: BACKOFF_MS,
      deliver: async (message) => {
        attempts.push({ process: 'main', id: message.id, n: message.payload.n, attempt: message.attempt });
        sealedSeen.push(message.secret?.token);
        if (message.attempt === 1) throw new Error('mail server down');
      },
    });
    // Only the second process handles this topic.
    secondOutbox.handle('medium.elsewhere', {
      deliver: async (message) =>
        void attempts.push({
          process: 'second',
          id: message.id,
          n: message.payload.n,
          attempt: message.attempt,
        }),
    });
  });
  afterAll(async () => {
    await second?.close();
    await ctx?.close();
  });

  it('claims only the topics a process handles; the process that handles the others claims them', async () => {
    behaviour = async () => undefined;
    const handled = await enqueue('medium.claims', numbered(1, 2));
    const elsewhere = await enqueue('medium.elsewhere', numbered(101, 3));
    expect(await outbox.runDue('medium.elsewhere')).toBe(0);
    expect(await outbox.runDue()).toBe(2);
    for (const id of handled) expect(await state(id)).toMatchObject({ status: 'sent', attempts: 1 });
    for (const id of elsewhere) {
      expect(await state(id)).toMatchObject({ status: 'pending', attempts: 0, sentAt: null });
    }
    // Still waiting an hour later: nobody here handles them.
    ctx.clock.advance(3_600_000);
    expect(await outbox.runDue()).toBe(0);
    expect(await secondOutbox.runDue()).toBe(3);
    for (const id of elsewhere) expect(await state(id)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(attempts.map((a) => `${a.process} ${a.n}`).sort()).toEqual([
      'main 1',
      'main 2',
      'second 101',
      'second 102',
      'second 103',
    ]);
  });

  it('does not claim a leased message again, in either process, until its lease ends', async () => {
    let release!: () => void;
    const hanging = new Promise<void>((resolve) => (release = resolve));
    behaviour = async (message) => {
      if (message.attempt === 1) await hanging;
    };
    const [id] = await enqueue('medium.claims', numbered(11, 1));
    const leasedAt = ctx.clock.nowMs();
    // The first attempt hangs (a stuck or crashed process): its claim never finishes on its own.
    const stuck = outbox.runDue('medium.claims');
    for (let i = 0; i < 500 && attemptsOf(id!).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(attemptsOf(id!)).toEqual([1]);
    expect(await state(id!)).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: new Date(leasedAt + LEASE_MS),
    });
    expect(await outbox.runDue('medium.claims')).toBe(0);
    expect(await secondOutbox.runDue('medium.claims')).toBe(0);
    ctx.clock.advance(LEASE_MS - 1);
    expect(await outbox.runDue('medium.claims')).toBe(0);
    expect(await secondOutbox.runDue('medium.claims')).toBe(0);
    expect(attemptsOf(id!)).toEqual([1]);
    // The lease has ended: the message is due again, for whichever process claims first.
    ctx.clock.advance(1);
    expect(await secondOutbox.runDue('medium.claims')).toBe(1);
    expect(attempts.filter((a) => a.id === id).map((a) => [a.process, a.attempt])).toEqual([
      ['main', 1],
      ['second', 2],
    ]);
    expect(await state(id!)).toMatchObject({ status: 'sent', attempts: 2 });
    release();
    expect(await stuck).toBe(1);
  });

  // On PostgreSQL the two processes have their own pools, so their claims and leases really overlap. On PGlite
  // (one connection) the calls interleave at each await and every statement runs alone: what is shown there is
  // only that the conditional lease lets one attempt through per message, not that the claims run in parallel.
  it('delivers each message once when two processes claim at the same time', async () => {
    behaviour = () => new Promise((resolve) => setTimeout(resolve, 5));
    const ids = await enqueue('medium.claims', numbered(21, 16));
    const before = attempts.length;
    const claimed = await Promise.all([
      outbox.runDue('medium.claims'),
      secondOutbox.runDue('medium.claims'),
      outbox.runDue('medium.claims'),
      secondOutbox.runDue('medium.claims'),
    ]);
    const made = attempts.slice(before);
    expect(made.map((a) => a.id).sort()).toEqual([...ids].sort());
    expect(made.every((a) => a.attempt === 1)).toBe(true);
    // A claim may select a message another one leases first; it then makes no attempt of it.
    expect(claimed.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(ids.length);
    for (const id of ids) expect(await state(id)).toMatchObject({ status: 'sent', attempts: 1 });
    expect(await outbox.runDue('medium.claims')).toBe(0);
  });

  // PGlite has one connection: a transaction holding rows would block every other statement, so this runs on
  // PostgreSQL only.
  it.runIf(onPostgres)(
    'passes over the messages another transaction holds (FOR UPDATE SKIP LOCKED)',
    async () => {
      behaviour = async () => undefined;
      const ids = await enqueue('medium.claims', numbered(41, 5));
      const held = ids.slice(0, 2);
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // Another session's transaction holds two of the rows, as a replica's claim would while it selects them.
      const holder = ctx.db.db.transaction(async (t) => {
        await t.execute(
          sql`select id from outbox_messages where id = any(${sql.param(held)}::text[]) for update`,
        );
        locked();
        await released;
      });
      await isLocked;
      try {
        // A claim that waited for the held rows would never end while they are held: bounded here.
        const claim = outbox.runDue('medium.claims');
        const outcome = await Promise.race([
          claim,
          new Promise<'blocked'>((resolve) => setTimeout(() => resolve('blocked'), 5_000)),
        ]);
        expect(outcome).toBe(3);
        for (const id of ids.slice(2)) expect(await state(id)).toMatchObject({ status: 'sent', attempts: 1 });
        for (const id of held) expect(await state(id)).toMatchObject({ status: 'pending', attempts: 0 });
      } finally {
        release();
        await holder;
      }
      expect(await outbox.runDue('medium.claims')).toBe(2);
      for (const id of held) expect(await state(id)).toMatchObject({ status: 'sent', attempts: 1 });
    },
  );

  it('retries after the backoff, or after the delay an OutboxRetry asks for', async () => {
    const failures: Error[] = [new Error('receiver down'), new OutboxRetry('429 Too Many Requests', 42_000)];
    behaviour = async () => {
      const failure = failures.shift();
      if (failure) throw failure;
    };
    const [id] = await enqueue('medium.claims', numbered(51, 1));
    const start = ctx.clock.nowMs();
    expect(await outbox.runDue('medium.claims')).toBe(1);
    expect(await state(id!)).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: 'receiver down',
      nextAttemptAt: new Date(start + BACKOFF_MS[0]!),
    });
    ctx.clock.advance(BACKOFF_MS[0]! - 1);
    expect(await outbox.runDue('medium.claims')).toBe(0);
    ctx.clock.advance(1);
    expect(await outbox.runDue('medium.claims')).toBe(1);
    // The receiver's delay, not the second backoff (5 s); the attempt counts all the same.
    const retried = ctx.clock.nowMs();
    expect(await state(id!)).toMatchObject({
      status: 'pending',
      attempts: 2,
      lastError: '429 Too Many Requests',
      nextAttemptAt: new Date(retried + 42_000),
    });
    ctx.clock.advance(BACKOFF_MS[1]!);
    expect(await outbox.runDue('medium.claims')).toBe(0);
    ctx.clock.advance(42_000 - BACKOFF_MS[1]! - 1);
    expect(await outbox.runDue('medium.claims')).toBe(0);
    ctx.clock.advance(1);
    expect(await outbox.runDue('medium.claims')).toBe(1);
    expect(await state(id!)).toMatchObject({
      status: 'sent',
      attempts: 3,
      lastError: null,
      sentAt: ctx.clock.now(),
    });
    expect(attemptsOf(id!)).toEqual([1, 2, 3]);
  });

  it('marks a message failed after maxAttempts and never claims it again', async () => {
    behaviour = async (message) => {
      throw new Error(`attempt ${message.attempt} failed`);
    };
    const [id] = await enqueue('medium.claims', numbered(61, 1));
    expect(await outbox.runDue('medium.claims')).toBe(1);
    ctx.clock.advance(BACKOFF_MS[0]!);
    expect(await outbox.runDue('medium.claims')).toBe(1);
    expect(await state(id!)).toMatchObject({ status: 'pending', attempts: 2, lastError: 'attempt 2 failed' });
    // The second failure waits the second backoff (5 s).
    ctx.clock.advance(BACKOFF_MS[1]! - 1);
    expect(await outbox.runDue('medium.claims')).toBe(0);
    ctx.clock.advance(1);
    expect(await outbox.runDue('medium.claims')).toBe(1);
    expect(await state(id!)).toMatchObject({
      status: 'failed',
      attempts: MAX_ATTEMPTS,
      lastError: 'attempt 3 failed',
      sentAt: null,
    });
    ctx.clock.advance(7 * 24 * 3_600_000);
    expect(await outbox.runDue('medium.claims')).toBe(0);
    expect(await secondOutbox.runDue('medium.claims')).toBe(0);
    expect(attemptsOf(id!)).toEqual([1, 2, 3]);
  });

  it('keeps the secret part sealed through a failed attempt and clears it once the message is sent', async () => {
    const [id] = await enqueue('medium.sealed', [
      { payload: { n: 71 }, secret: { token: 'reset-token-71' } },
    ]);
    expect(await state(id!)).toMatchObject({ status: 'pending', secret: { token: 'reset-token-71' } });
    expect(await outbox.runDue('medium.sealed')).toBe(1);
    expect(await state(id!)).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: 'mail server down',
      secret: { token: 'reset-token-71' },
    });
    ctx.clock.advance(BACKOFF_MS[0]!);
    expect(await outbox.runDue('medium.sealed')).toBe(1);
    expect(await state(id!)).toMatchObject({ status: 'sent', attempts: 2, lastError: null, secret: null });
    // Each attempt had the secret, unsealed; the listing without secrets never shows the field.
    expect(sealedSeen).toEqual(['reset-token-71', 'reset-token-71']);
    const plain = (await outbox.list(1000, { topic: 'medium.sealed' })).find((message) => message.id === id);
    expect(plain).toBeDefined();
    expect(plain).not.toHaveProperty('secret');
    expect(plain).not.toHaveProperty('sealed');
  });
});
