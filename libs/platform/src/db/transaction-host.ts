import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { type SQL, sql } from 'drizzle-orm';
import { DATABASE, type DatabaseHandle, type Db, type Row, type SendStatements } from './database.js';
import type { Query } from './query.js';

/**
 * The one transaction helper. `run` opens a transaction (or joins the one already open in this async
 * context); repositories read `db`, which is the ambient transaction when there is one. Audit entries and
 * outbox rows therefore join the caller's transaction without a `tx` parameter on every signature, and the
 * code is the same on node-postgres and PGlite.
 */
interface TransactionScope {
  tx: Db;
  afterCommit: (() => unknown)[];
  /** Advisory locks this transaction holds (they are released only when it ends). */
  locks: Set<string>;
}

@Injectable()
export class TransactionHost {
  private readonly storage = new AsyncLocalStorage<TransactionScope>();

  constructor(@Inject(DATABASE) private readonly handle: DatabaseHandle) {}

  get db(): Db {
    return this.storage.getStore()?.tx ?? this.handle.db;
  }

  get inTransaction(): boolean {
    return this.storage.getStore() !== undefined;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.storage.getStore()) return fn();
    const afterCommit: (() => unknown)[] = [];
    const result = await this.handle.db.transaction((tx) =>
      this.storage.run({ tx: tx as unknown as Db, afterCommit, locks: new Set() }, fn),
    );
    for (const callback of afterCommit) {
      // Work after commit (mail delivery, notifications) never fails the request that committed.
      void Promise.resolve()
        .then(callback)
        .catch(() => undefined);
    }
    return result;
  }

  /**
   * Yields what `body` yields, every read of `db` in `body` running in one REPEATABLE READ, READ ONLY
   * transaction: the whole stream sees one snapshot of the database, whatever commits meanwhile. Items are pulled
   * one at a time, as the consumer asks, so memory stays what one item holds. The transaction lasts until the
   * consumer has read the end, breaks or throws (a `for await` loop ends it either way): a consumer must not leave
   * the stream paused. A long one holds back vacuum on PostgreSQL; on PGlite (one session) the process's other
   * queries wait until it ends. Not inside another transaction.
   */
  async *snapshot<T>(body: () => AsyncIterable<T>): AsyncGenerator<T> {
    if (this.storage.getStore()) throw new Error('TransactionHost.snapshot cannot run inside a transaction');
    type Reply = { resolve: (result: IteratorResult<T>) => void; reject: (err: unknown) => void };
    // The consumer's one outstanding request: the next item, or stop.
    let request: { stop: boolean; reply: Reply } | undefined;
    let requested: (() => void) | undefined;
    let ended = false;
    const nextRequest = async () => {
      while (!request) await new Promise<void>((resolve) => (requested = resolve));
      const current = request;
      request = undefined;
      return current;
    };
    // The body runs in the transaction's callback (so `db` is the transaction), one step per request.
    const transaction = this.handle.db.transaction(
      (tx) =>
        this.storage.run({ tx: tx as unknown as Db, afterCommit: [], locks: new Set() }, async () => {
          const items = body()[Symbol.asyncIterator]();
          try {
            for (;;) {
              const { stop, reply } = await nextRequest();
              if (stop) {
                await items.return?.();
                reply.resolve({ done: true, value: undefined });
                return;
              }
              let result: IteratorResult<T>;
              try {
                result = await items.next();
              } catch (err) {
                reply.reject(err);
                throw err;
              }
              reply.resolve(result);
              if (result.done) return;
            }
          } finally {
            ended = true;
          }
        }),
      { isolationLevel: 'repeatable read', accessMode: 'read only' },
    );
    // One handler for the whole stream, not one per item: a transaction failing outside the body (BEGIN, COMMIT)
    // fails the request that waits.
    let failure: { err: unknown } | undefined;
    let waiting: Reply | undefined;
    transaction.catch((err: unknown) => {
      failure = { err };
      ended = true;
      waiting?.reject(err);
    });
    const ask = (stop: boolean) =>
      new Promise<IteratorResult<T>>((resolve, reject) => {
        if (failure) return reject(failure.err);
        waiting = { resolve, reject };
        request = { stop, reply: waiting };
        requested?.();
      });
    try {
      for (;;) {
        const result = await ask(false);
        if (result.done) break;
        yield result.value;
      }
    } finally {
      // The consumer stopped early (break, throw): the body is closed and the transaction ends.
      if (!ended) await ask(true);
      await transaction;
    }
  }

  /** Runs the query's statements one after another, in the ambient transaction if there is one. */
  async query<T>(query: Query<T>): Promise<T> {
    const results: Row[][] = [];
    for (const statement of query.statements) {
      results.push(((await this.db.execute(statement)) as unknown as { rows: Row[] }).rows);
    }
    return query.read(results);
  }

  /**
   * A transaction of its own (never the ambient one) written as a few round trips: `fn` gets `send`, which sends
   * statements together and answers their rows. On PostgreSQL each `send` is one round trip, BEGIN travelling
   * with the first and COMMIT with the one marked `commit`; a busy process pays an event-loop turn per round
   * trip, so a group commit that sends its reads together and its writes together waits two turns, not one per
   * statement. The statements see nothing of `db`, `lock` or `afterCommit`; an error rolls everything back.
   * On PGlite (one session) it waits for any transaction already open in the process, so it must not be called
   * from inside one.
   */
  pipelined<T>(fn: (send: SendStatements) => Promise<T>): Promise<T> {
    return this.storage.exit(() => this.handle.pipelinedTransaction(fn));
  }

  /**
   * Takes the transaction-scoped advisory locks named by `keys`, held until the current transaction ends; other
   * transactions (of any replica) asking for one of them wait. Locks are taken in sorted order, in one
   * statement, so two transactions locking overlapping sets cannot deadlock on them. Locks this transaction
   * already holds cost nothing.
   */
  async lock(...keys: string[]): Promise<void> {
    const scope = this.storage.getStore();
    if (!scope) throw new Error('TransactionHost.lock needs an open transaction');
    const wanted = [...new Set(keys)].filter((key) => !scope.locks.has(key));
    if (wanted.length === 0) return;
    await scope.tx.execute(lockStatement(wanted));
    for (const key of wanted) scope.locks.add(key);
  }

  /**
   * Runs `callback` once the current transaction has committed (never if it rolls back); outside a
   * transaction, right away.
   */
  afterCommit(callback: () => unknown): void {
    const scope = this.storage.getStore();
    if (scope) scope.afterCommit.push(callback);
    else
      void Promise.resolve()
        .then(callback)
        .catch(() => undefined);
  }
}

/**
 * Takes the transaction-scoped advisory locks named by `keys` in sorted order, in one statement (two transactions
 * locking overlapping sets cannot deadlock on them). For `TransactionHost.lock` and pipelined transactions.
 */
export function lockStatement(keys: string[]): SQL {
  const sorted = [...new Set(keys)].sort();
  return sql`select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(${sql.param(sorted)}::text[]) as k`;
}
