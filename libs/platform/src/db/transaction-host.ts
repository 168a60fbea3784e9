import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, type DatabaseHandle, type Db } from './database.js';

/**
 * The one transaction helper. `run` opens a transaction (or joins the one already open in this async
 * context); repositories read `db`, which is the ambient transaction when there is one. Audit entries and
 * outbox rows therefore join the caller's transaction without a `tx` parameter on every signature, and the
 * code is the same on node-postgres and PGlite.
 */
interface TransactionScope {
  tx: Db;
  afterCommit: (() => unknown)[];
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
      this.storage.run({ tx: tx as unknown as Db, afterCommit }, fn),
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
