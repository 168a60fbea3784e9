import { Logger } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import type pg from 'pg';
import type { DatabaseHandle } from '../db/database.js';
import type { TransactionHost } from '../db/transaction-host.js';

export interface NotificationBusOptions {
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

export const NOTIFICATION_BUS_DEFAULTS: NotificationBusOptions = {
  reconnectMinMs: 500,
  reconnectMaxMs: 30_000,
};

/** Someone interested in one channel. */
export interface NotificationSubscriber {
  /**
   * A notification on the channel: from this process after its commit (`local`), or from any replica by NOTIFY
   * (on PostgreSQL this process's own notifications come that way too).
   */
  onMessage(payload: string, local: boolean): void;
  /**
   * PostgreSQL only: whether notifications of other replicas are heard now. False when the listener is lost (what
   * other replicas did meanwhile is unknown), true once it listens again.
   */
  onListening?(listening: boolean): void;
}

/** Channel names are SQL identifiers in LISTEN: kept to a safe spelling. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertChannelName(channel: string): void {
  if (!CHANNEL.test(channel)) throw new Error(`Invalid notification channel name: ${channel}`);
}

const buses = new WeakMap<DatabaseHandle, NotificationBus>();

/**
 * The process's one LISTEN connection to a database, shared by every subscriber of every channel (the caches'
 * invalidations, and the event stream). `notify` is called inside the transaction that made the change: on
 * PostgreSQL its NOTIFY is delivered only on commit, to every replica; in this process, subscribers hear it right
 * after the commit, without waiting for the round trip (on PGlite, which has one process, the only path).
 *
 * The connection is opened by the first subscription and closed with the last. When it is lost, subscribers are told
 * (`onListening(false)`), it is reopened with exponential backoff, every channel is listened to again, and they are
 * told once more. One bus per database handle: `NotificationBus.of(handle)`.
 */
export class NotificationBus {
  private readonly logger = new Logger('NotificationBus');
  private readonly subscribers = new Map<string, Set<NotificationSubscriber>>();
  private client: pg.Client | null = null;
  private listening = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  /** Connection changes (connect, LISTEN, UNLISTEN, end) run one after another. */
  private chain: Promise<void> = Promise.resolve();
  /** Connections opened so far: one per process, plus one per reconnection (for tests and diagnostics). */
  connections = 0;

  private constructor(
    private readonly handle: DatabaseHandle,
    private readonly options: NotificationBusOptions,
  ) {}

  /** The bus of this database handle (options apply when it is first asked for). */
  static of(handle: DatabaseHandle, options?: Partial<NotificationBusOptions>): NotificationBus {
    let bus = buses.get(handle);
    if (!bus)
      buses.set(handle, (bus = new NotificationBus(handle, { ...NOTIFICATION_BUS_DEFAULTS, ...options })));
    return bus;
  }

  /** Whether notifications cross processes here (PostgreSQL); on PGlite they stay in this process. */
  get crossProcess(): boolean {
    return this.handle.driver === 'postgres' && this.handle.newClient !== undefined;
  }

  /** Whether the LISTEN connection is up (always false on PGlite). */
  get isListening(): boolean {
    return this.listening;
  }

  /**
   * Subscribes to `channel`; on PostgreSQL, resolves once the channel is listened to (or the first connection
   * attempt failed, in which case `onListening(true)` comes with a later reconnection). Returns the unsubscribe.
   */
  async subscribe(channel: string, subscriber: NotificationSubscriber): Promise<() => Promise<void>> {
    assertChannelName(channel);
    let set = this.subscribers.get(channel);
    const first = !set;
    if (!set) this.subscribers.set(channel, (set = new Set()));
    set.add(subscriber);
    if (this.crossProcess) {
      await this.serially(async () => {
        if (!set.has(subscriber)) return;
        // A new connection tells every subscriber once it listens; on one that listens already, only the new one.
        if (!this.client && !this.reconnectTimer) return this.connect();
        if (!this.listening) return;
        if (first) await this.listenTo(channel);
        if (this.listening) subscriber.onListening?.(true);
      });
    }
    return () => this.unsubscribe(channel, subscriber);
  }

  /**
   * Call inside the transaction whose commit the notification announces. On PostgreSQL a NOTIFY is queued in it
   * (sent to every replica on commit, dropped on rollback); this process's subscribers hear it after the commit.
   */
  async notify(tx: TransactionHost, channel: string, payload: string): Promise<void> {
    assertChannelName(channel);
    if (this.handle.driver === 'postgres') {
      await tx.db.execute(sql`select pg_notify(${channel}, ${payload})`);
    }
    tx.afterCommit(() => this.deliver(channel, payload, true));
  }

  /**
   * For a pipelined transaction: the NOTIFY statement (none on PGlite) to send with it, and what to call once it has
   * committed (this process's subscribers).
   */
  notifyQuery(channel: string, payload: string): { statements: SQL[]; afterCommit: () => void } {
    assertChannelName(channel);
    return {
      statements: this.handle.driver === 'postgres' ? [sql`select pg_notify(${channel}, ${payload})`] : [],
      afterCommit: () => this.deliver(channel, payload, true),
    };
  }

  private deliver(channel: string, payload: string, local: boolean): void {
    for (const subscriber of this.subscribers.get(channel) ?? []) {
      try {
        subscriber.onMessage(payload, local);
      } catch (err) {
        this.logger.warn({ err, channel }, 'A notification subscriber failed');
      }
    }
  }

  private async unsubscribe(channel: string, subscriber: NotificationSubscriber): Promise<void> {
    const set = this.subscribers.get(channel);
    if (!set?.delete(subscriber)) return;
    if (set.size > 0) return;
    this.subscribers.delete(channel);
    if (!this.crossProcess) return;
    await this.serially(async () => {
      if (this.subscribers.has(channel)) return;
      if (this.subscribers.size === 0) return this.disconnect();
      if (this.listening) await this.client?.query(`UNLISTEN ${channel}`).catch(() => undefined);
    });
  }

  private serially(fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async listenTo(channel: string): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      await client.query(`LISTEN ${channel}`);
    } catch (err) {
      this.lost(client, err);
    }
  }

  private async connect(): Promise<void> {
    if (this.subscribers.size === 0) return;
    const client = this.handle.newClient!();
    this.client = client;
    this.connections += 1;
    client.on('notification', (msg) => {
      if (msg.payload !== undefined) this.deliver(msg.channel, msg.payload, false);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of this.subscribers.keys()) await client.query(`LISTEN ${channel}`);
      if (this.client !== client) return;
      this.attempt = 0;
      this.listening = true;
      for (const set of this.subscribers.values()) for (const s of set) s.onListening?.(true);
    } catch (err) {
      this.lost(client, err);
    }
  }

  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    const wasListening = this.listening;
    this.listening = false;
    void client.end().catch(() => undefined);
    if (wasListening)
      for (const set of this.subscribers.values()) for (const s of set) s.onListening?.(false);
    if (this.subscribers.size === 0) return;
    const delay = Math.min(this.options.reconnectMaxMs, this.options.reconnectMinMs * 2 ** this.attempt);
    this.attempt += 1;
    this.logger.warn(
      `change listener lost (${err instanceof Error ? err.message : 'connection ended'}); ` +
        `reconnecting in ${delay} ms`,
    );
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.serially(() => (this.client ? Promise.resolve() : this.connect()));
    }, delay);
    this.reconnectTimer.unref();
  }

  private async disconnect(): Promise<void> {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const client = this.client;
    this.client = null;
    this.listening = false;
    this.attempt = 0;
    await client?.end().catch(() => undefined);
  }
}
