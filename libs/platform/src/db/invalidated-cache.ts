import { assertChannelName, NotificationBus } from '../notifications/notification-bus.js';
import type { DatabaseHandle } from './database.js';
import type { TransactionHost } from './transaction-host.js';

export interface InvalidatedCacheOptions {
  /** Entries kept; the least recently used one is dropped beyond this. */
  maxEntries: number;
  /** Safety net only: changes invalidate at once; this bounds the damage of a lost notification. */
  ttlMs: number;
  /** Reconnection backoff of the process's notification bus (applies if this cache is the first to ask for it). */
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
 * Values read from the database, kept in a bounded LRU map and dropped as soon as the data behind a key changes.
 * The writer calls `announce(key)` inside its transaction; the key goes out on the process's NotificationBus: after
 * commit every cache of this process on the same channel drops it, and on PostgreSQL a NOTIFY (delivered only on
 * commit) makes every other replica do the same. A PostgreSQL cache that cannot hear other replicas (listener down
 * or reconnecting) reads through instead of serving what may be stale, and clears itself when it hears again.
 * Loads are shared between concurrent misses of one key; a load that returns null is not kept.
 */
export class InvalidatedCache<V> {
  private readonly options: InvalidatedCacheOptions;
  private readonly bus: NotificationBus;
  /** Map order is recency order: the first key is the least recently used. */
  private readonly entries = new Map<string, Entry<V>>();
  private readonly loading = new Map<string, Load<V>>();
  private listening = false;
  private stopped = true;
  private unsubscribe: (() => Promise<void>) | null = null;

  constructor(
    private readonly channel: string,
    handle: DatabaseHandle,
    private readonly tx: TransactionHost,
    options?: Partial<InvalidatedCacheOptions>,
  ) {
    this.options = { ...INVALIDATED_CACHE_DEFAULTS, ...options };
    this.bus = NotificationBus.of(handle, this.options);
    assertChannelName(channel);
  }

  /** Subscribes to its channel; on PostgreSQL the bus's first connection attempt is awaited. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = await this.bus.subscribe(this.channel, {
      onMessage: (key) => this.invalidate(key),
      onListening: (listening) => {
        this.listening = listening;
        // Changes made while nobody listened were not heard: nothing loaded before now can be trusted.
        this.clear();
      },
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    this.clear();
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = null;
    await unsubscribe?.();
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
  announce(key: string): Promise<void> {
    return this.bus.notify(this.tx, this.channel, key);
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

  private store(key: string, value: V): void {
    this.entries.set(key, { value, expiresAt: this.options.now() + this.options.ttlMs });
    while (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  private canCache(): boolean {
    return !this.stopped && (!this.bus.crossProcess || this.listening);
  }
}
