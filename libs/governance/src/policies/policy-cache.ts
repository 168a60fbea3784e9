import {
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import type pg from 'pg';
import { DATABASE, type DatabaseHandle, TransactionHost } from '../../../platform/src/index.js';
import { compile, type CompiledPolicy } from './engine/index.js';
import { POLICY_CHANGED_CHANNEL, PoliciesRepository } from './policies.repository.js';
import { PolicySet } from './policy-set.js';
import type { PolicyRow } from './policy.schema.js';

export interface PolicyCacheOptions {
  /** Organizations kept compiled; the least recently used one is dropped beyond this. */
  maxOrganizations: number;
  /** Safety net only: changes invalidate at once; this bounds the damage of a lost notification. */
  ttlMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Monotonic milliseconds (tests replace it). */
  now: () => number;
}

export const POLICY_CACHE_OPTIONS = Symbol('POLICY_CACHE_OPTIONS');

export const POLICY_CACHE_DEFAULTS: PolicyCacheOptions = {
  maxOrganizations: 1000,
  ttlMs: 60_000,
  reconnectMinMs: 500,
  reconnectMaxMs: 30_000,
  now: () => performance.now(),
};

interface Entry {
  policies: CompiledPolicy[];
  expiresAt: number;
}

interface Load {
  promise: Promise<CompiledPolicy[]>;
  /** Set when the organization is invalidated while the load runs: its result must not be kept. */
  stale: boolean;
}

/**
 * Caches of one process that read the same database. A committed change invalidates all of them at once, so a
 * replica always reads its own writes without waiting for the NOTIFY round trip (on PGlite, the only path).
 */
const localCaches = new WeakMap<DatabaseHandle, Set<CachedPolicySet>>();

export function toPolicyInput(row: PolicyRow) {
  return {
    id: row.id,
    name: row.name,
    outcome: row.outcome,
    conditions: row.conditions,
    match: row.match,
    agentIds: row.agentIds,
    priority: row.priority,
    isActive: row.isActive,
  };
}

/**
 * Compiled active policies per organization in a bounded LRU map. Every policy change calls
 * `announceChange` inside its transaction: after commit this process's caches drop the organization, and on
 * PostgreSQL a NOTIFY (delivered only on commit) makes every other replica's listener do the same.
 */
@Injectable()
export class CachedPolicySet extends PolicySet implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('PolicyCache');
  private readonly options: PolicyCacheOptions;
  /** Map order is recency order: the first key is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Load>();
  private client: pg.Client | null = null;
  private listening = false;
  private stopped = true;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly repo: PoliciesRepository,
    private readonly tx: TransactionHost,
    @Inject(DATABASE) private readonly handle: DatabaseHandle,
    @Optional() @Inject(POLICY_CACHE_OPTIONS) options?: Partial<PolicyCacheOptions>,
  ) {
    super();
    this.options = { ...POLICY_CACHE_DEFAULTS, ...options };
  }

  onModuleInit(): Promise<void> {
    return this.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  /** Joins the process-local invalidation and, on PostgreSQL, connects the listener (first attempt awaited). */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    let siblings = localCaches.get(this.handle);
    if (!siblings) localCaches.set(this.handle, (siblings = new Set()));
    siblings.add(this);
    if (this.handle.driver === 'postgres' && this.handle.newClient) await this.connectListener();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    localCaches.get(this.handle)?.delete(this);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const client = this.client;
    this.client = null;
    this.listening = false;
    this.clear();
    await client?.end().catch(() => undefined);
  }

  async forOrganization(organizationId: string): Promise<CompiledPolicy[]> {
    const entry = this.entries.get(organizationId);
    if (entry) {
      this.entries.delete(organizationId);
      if (entry.expiresAt > this.options.now()) {
        this.entries.set(organizationId, entry);
        return entry.policies;
      }
    }
    const pending = this.loading.get(organizationId);
    if (pending) return pending.promise;
    const load: Load = { promise: this.load(organizationId), stale: false };
    this.loading.set(organizationId, load);
    try {
      const policies = await load.promise;
      if (!load.stale && this.canCache()) this.store(organizationId, policies);
      return policies;
    } finally {
      if (this.loading.get(organizationId) === load) this.loading.delete(organizationId);
    }
  }

  /**
   * Call inside the transaction that changed an organization's policies. Nothing is invalidated if it rolls
   * back; NOTIFY is queued by PostgreSQL until commit.
   */
  async announceChange(organizationId: string): Promise<void> {
    if (this.handle.driver === 'postgres') await this.repo.notifyChanged(organizationId);
    this.tx.afterCommit(() => {
      for (const cache of localCaches.get(this.handle) ?? [this]) cache.invalidate(organizationId);
    });
  }

  invalidate(organizationId: string): void {
    this.entries.delete(organizationId);
    const pending = this.loading.get(organizationId);
    if (pending) {
      pending.stale = true;
      this.loading.delete(organizationId);
    }
  }

  clear(): void {
    this.entries.clear();
    for (const pending of this.loading.values()) pending.stale = true;
    this.loading.clear();
  }

  /** Organizations currently cached (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  private async load(organizationId: string): Promise<CompiledPolicy[]> {
    const rows = await this.repo.listActiveForEvaluation(organizationId);
    return Object.freeze(rows.map((row) => compile(toPolicyInput(row)))) as CompiledPolicy[];
  }

  private store(organizationId: string, policies: CompiledPolicy[]): void {
    this.entries.set(organizationId, { policies, expiresAt: this.options.now() + this.options.ttlMs });
    while (this.entries.size > this.options.maxOrganizations) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** A PostgreSQL replica that cannot hear other replicas' changes reads through instead of serving stale sets. */
  private canCache(): boolean {
    return !this.stopped && (this.handle.driver !== 'postgres' || this.listening);
  }

  private async connectListener(): Promise<void> {
    if (this.stopped) return;
    const client = this.handle.newClient!();
    this.client = client;
    client.on('notification', (msg) => {
      if (msg.channel === POLICY_CHANGED_CHANNEL && msg.payload) this.invalidate(msg.payload);
    });
    client.on('error', (err) => this.listenerLost(client, err));
    client.on('end', () => this.listenerLost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${POLICY_CHANGED_CHANNEL}`);
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
      `policy change listener lost (${err instanceof Error ? err.message : 'connection ended'}); ` +
        `reconnecting in ${delay} ms`,
    );
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connectListener();
    }, delay);
    this.reconnectTimer.unref();
  }
}
