import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import {
  type Actor,
  type ApiKeyResolver,
  DATABASE,
  type DatabaseHandle,
  InvalidatedCache,
  type InvalidatedCacheOptions,
  NotificationBus,
  safeEqual,
  sha256Hex,
  TransactionHost,
} from '#platform';
import { AgentKeysRepository, ORGANIZATION_DELETED_CHANNEL } from '#identity';
import { AGENT_KEY_PREFIX, isWellFormedAgentKey } from './agent-key.js';

/** The channel on which a revoked agent key is announced to every replica; the payload is the key's hash. */
export const AGENT_KEY_REVOKED_CHANNEL = 'svc_agent_key_revoked';
export const AGENT_KEY_CACHE_OPTIONS = Symbol('AGENT_KEY_CACHE_OPTIONS');
export const AGENT_KEY_CACHE_DEFAULTS: Partial<InvalidatedCacheOptions> = { maxEntries: 10_000 };

/**
 * Resolves `svc_agent_` keys: one indexed lookup by hash, joined with the organization for its plan, kept in an
 * `InvalidatedCache` so that ingestion does not pay a query per request. An agent key is bound to its agent (the
 * actor's agentId and scope). Regenerating or deleting the agent revokes the key and announces it: this process
 * drops it at commit and other replicas when the NOTIFY arrives. Trace writes re-check the key under the
 * organization's chain lock as well, so no trace is stored with a key revoked before the write commits.
 * Unknown and revoked keys are never cached. Deleting an organization empties the cache on every
 * replica (`ORGANIZATION_DELETED_CHANNEL`): the lookup refuses keys of a deleted organization, and deletions are
 * rare enough that dropping every entry costs nothing (docs/compliance-officers.md, "Organization deletion").
 */
@Injectable()
export class AgentKeyResolver implements ApiKeyResolver, OnModuleInit, OnModuleDestroy {
  readonly prefix = AGENT_KEY_PREFIX;
  private readonly cache: InvalidatedCache<Actor>;
  private readonly bus: NotificationBus;
  private unsubscribeDeletions: (() => Promise<void>) | null = null;

  constructor(
    private readonly keys: AgentKeysRepository,
    tx: TransactionHost,
    @Inject(DATABASE) handle: DatabaseHandle,
    @Optional() @Inject(AGENT_KEY_CACHE_OPTIONS) options?: Partial<InvalidatedCacheOptions>,
  ) {
    this.cache = new InvalidatedCache(AGENT_KEY_REVOKED_CHANNEL, handle, tx, {
      ...AGENT_KEY_CACHE_DEFAULTS,
      ...options,
    });
    this.bus = NotificationBus.of(handle);
  }

  async onModuleInit(): Promise<void> {
    // Subscribed before the cache starts: no key is cached before a deletion can be heard.
    this.unsubscribeDeletions = await this.bus.subscribe(ORGANIZATION_DELETED_CHANNEL, {
      onMessage: () => this.cache.clear(),
      onListening: () => this.cache.clear(),
    });
    await this.cache.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.cache.stop();
    const unsubscribe = this.unsubscribeDeletions;
    this.unsubscribeDeletions = null;
    await unsubscribe?.();
  }

  resolveKey(key: string): Promise<Actor | null> {
    if (!isWellFormedAgentKey(key)) return Promise.resolve(null);
    const keyHash = sha256Hex(key);
    return this.cache.get(keyHash, () => this.lookup(keyHash));
  }

  /** Call inside the transaction that revoked these keys (by hash). */
  async announceRevoked(keyHashes: string[]): Promise<void> {
    for (const keyHash of keyHashes) await this.cache.announce(keyHash);
  }

  /** Keys currently cached (for tests and diagnostics). */
  get cachedKeys(): number {
    return this.cache.size;
  }

  private async lookup(keyHash: string): Promise<Actor | null> {
    const row = await this.keys.findPrincipalByHash(keyHash);
    if (!row || !row.agentId || !safeEqual(row.keyHash, keyHash)) return null;
    // Shared by every request that presents the key until it is revoked: frozen, so none can alter it.
    return Object.freeze({
      type: 'agent',
      credential: 'agentKey',
      organizationId: row.organizationId,
      plan: row.plan,
      userId: null,
      email: null,
      role: null,
      keyId: row.id,
      agentId: row.agentId,
      scope: Object.freeze({ agentIds: Object.freeze([row.agentId]) as string[] }),
    } satisfies Actor);
  }
}
