import { Logger } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import type { DatabaseHandle } from './database.js';
import type { TransactionHost } from './transaction-host.js';

export interface InvalidatedCacheOptions {
  /** Entries kept; the least recently used one is dropped beyond this. */
  maxEntries: number;
  /** Safety net only: changes invalidate at once; this bounds the damage of a lost notification. */
  ttlMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Monotonic milliseconds (tests replace it). */
  now: () => number;
}

export const INVALIDATED_CACHE_DEFAULTS: InvalidatedCacheOptions = {
  maxEntries: 1000,
  ttlMs: 60_000,
  reconnectMinMs: 500,
  reconnectMaxMs: 30_000,
  now: () => performance.now(),
};

interface Entry<V> {
  value: V;
  expiresAt: number;
}

interface Load<V> {
  promise: Promise<V | null>;
  /** Set when the key is invalidated while the load runs: its result must not be kept. */
  stale: boolean;
}

/**
 * Caches of one process on the same database, per channel. A committed change invalidates all of them at once,
 * so a replica always reads its own writes without waiting for the NOTIFY round trip (on PGlite, the only path).
 */
const localCaches = new WeakMap<DatabaseHandle, Map<string, Set<InvalidatedCache<unknown>>>>();

/** Channel names are SQL identifiers in LISTEN: kept to a safe spelling. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Values read from the database, kept in a bounded LRU map and dropped as soon as the data behind a key changes.
 * The writer calls `announce(key)` inside its transaction: after commit, every cache of this process on the same
 * channel and database drops the key, and on PostgreSQL a NOTIFY (delivered only on commit) makes every other
 * replica's listener do the same. A PostgreSQL cache that cannot hear other replicas (listener down or
 * reconnecting) reads through instead of serving what may be stale, and clears itself when it hears again.
 * Loads are shared between concurrent misses of one key; a load that returns null is not kept.
 */
export class InvalidatedCache<V> {
  private readonly logger: Logger;
  private readonly options: InvalidatedCacheOptions;
  /** Map order is recency order: the first key is the least recently used. */
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, Load<V>>();
  private client: pg.Client | null = null;
  private listening = false;
  private stopped = true;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly channel: string,
    private readonly handle: DatabaseHandle,
    private readonly tx: TransactionHost,
    options?: Partial<InvalidatedCacheOptions>,
  ) {
    if (!CHANNEL.test(channel)) throw new Error(`Invalid cache channel name: ${channel}`);
    this.options = { ...INVALIDATED_CACHE_DEFAULTS, ...options };
    this.logger = new Logger(`InvalidatedCache:${channel}`);
  }

  /** Joins the process-local invalidation and, on PostgreSQL, connects the listener (first attempt awaited). */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.siblings().add(this as InvalidatedCache<unknown>);
    if (this.handle.driver === 'postgres' && this.handle.newClient) await this.connectListener();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.siblings().delete(this as InvalidatedCache<unknown>);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const client = this.client;
    this.client = null;
    this.listening = false;
    this.clear();
    await client?.end().catch(() => undefined);
  }

  /** The cached value of `key`, or the result of `load` (kept unless null or overtaken by an invalidation). */
  async get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      if (entry.expiresAt > this.options.now()) {
        this.entries.set(key, entry);
        return entry.value;
      }
    }
    const pending = this.loading.get(key);
    if (pending) return pending.promise;
    const current: Load<V> = { promise: load(), stale: false };
    this.loading.set(key, current);
    try {
      const value = await current.promise;
      if (value !== null && !current.stale && this.canCache()) this.store(key, value);
      return value;
    } finally {
      if (this.loading.get(key) === current) this.loading.delete(key);
    }
  }

  /**
   * Call inside the transaction that changed what `key` names. Nothing is invalidated if it rolls back; NOTIFY
   * is queued by PostgreSQL until commit.
   */
  async announce(key: string): Promise<void> {
    if (this.handle.driver === 'postgres') {
      await this.tx.db.execute(sql`select pg_notify(${this.channel}, ${key})`);
    }
    this.tx.afterCommit(() => {
      for (const cache of this.siblings()) cache.invalidate(key);
    });
  }

  invalidate(key: string): void {
    this.entries.delete(key);
    const pending = this.loading.get(key);
    if (pending) {
      pending.stale = true;
      this.loading.delete(key);
    }
  }

  clear(): void {
    this.entries.clear();
    for (const pending of this.loading.values()) pending.stale = true;
    this.loading.clear();
  }

  /** Entries currently cached (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  private siblings(): Set<InvalidatedCache<unknown>> {
    let byChannel = localCaches.get(this.handle);
    if (!byChannel) localCaches.set(this.handle, (byChannel = new Map()));
    let set = byChannel.get(this.channel);
    if (!set) byChannel.set(this.channel, (set = new Set()));
    return set;
  }

  private store(key: string, value: V): void {
    this.entries.set(key, { value, expiresAt: this.options.now() + this.options.ttlMs });
    while (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  private canCache(): boolean {
    return !this.stopped && (this.handle.driver !== 'postgres' || this.listening);
  }

  private async connectListener(): Promise<void> {
    if (this.stopped) return;
    const client = this.handle.newClient!();
    this.client = client;
    client.on('notification', (msg) => {
      if (msg.channel === this.channel && msg.payload) this.invalidate(msg.payload);
    });
    client.on('error', (err) => this.listenerLost(client, err));
    client.on('end', () => this.listenerLost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      if (this.client !== client) return;
      this.attempt = 0;
      this.listening = true;
      // Changes made while nobody listened were not heard: nothing loaded before now can be trusted.
      this.clear();
    } catch (err) {
      this.listenerLost(client, err);
    }
  }

  private listenerLost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    this.listening = false;
    this.clear();
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    const delay = Math.min(this.options.reconnectMaxMs, this.options.reconnectMinMs * 2 ** this.attempt);
    this.attempt += 1;
    this.logger.warn(
      `change listener lost (${err instanceof Error ? err.message : 'connection ended'}); ` +
        `reconnecting in ${delay} ms`,
    );
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connectListener();
    }, delay);
    this.reconnectTimer.unref();
  }
}
