import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, type DatabaseHandle, type Db } from './database.js';

/**
 * The one transaction helper. `run` opens a transaction (or joins the one already open in this async
 * context); repositories read `db`, which is the ambient transaction when there is one. Audit entries and
 * outbox rows therefore join the caller's transaction without a `tx` parameter on every signature, and the
 * code is the same on node-postgres and PGlite.
 */
@Injectable()
export class TransactionHost {
  private readonly storage = new AsyncLocalStorage<Db>();

  constructor(@Inject(DATABASE) private readonly handle: DatabaseHandle) {}

  get db(): Db {
    return this.storage.getStore() ?? this.handle.db;
  }

  get inTransaction(): boolean {
    return this.storage.getStore() !== undefined;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.storage.getStore()) return fn();
    return this.handle.db.transaction((tx) => this.storage.run(tx as unknown as Db, fn));
  }
}
