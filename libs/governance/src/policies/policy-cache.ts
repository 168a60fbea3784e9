import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import {
  DATABASE,
  type DatabaseHandle,
  InvalidatedCache,
  type InvalidatedCacheOptions,
  TransactionHost,
} from '#platform';
import { compile, type CompiledPolicy } from './engine/index.js';
import { POLICY_CHANGED_CHANNEL, PoliciesRepository } from './policies.repository.js';
import { PolicySet } from './policy-set.js';
import type { PolicyRow } from './policy.schema.js';

/** `maxEntries` bounds the organizations kept compiled. */
export type PolicyCacheOptions = InvalidatedCacheOptions;

export const POLICY_CACHE_OPTIONS = Symbol('POLICY_CACHE_OPTIONS');

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
 * Compiled active policies per organization, in an `InvalidatedCache` keyed by organization. Every policy change
 * calls `announceChange` inside its transaction: after commit this process's caches drop the organization, and
 * on PostgreSQL a NOTIFY makes every other replica's listener do the same.
 */
@Injectable()
export class CachedPolicySet extends PolicySet implements OnModuleInit, OnModuleDestroy {
  private readonly cache: InvalidatedCache<CompiledPolicy[]>;

  constructor(
    private readonly repo: PoliciesRepository,
    tx: TransactionHost,
    @Inject(DATABASE) handle: DatabaseHandle,
    @Optional() @Inject(POLICY_CACHE_OPTIONS) options?: Partial<PolicyCacheOptions>,
  ) {
    super();
    this.cache = new InvalidatedCache(POLICY_CHANGED_CHANNEL, handle, tx, options);
  }

  onModuleInit(): Promise<void> {
    return this.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  start(): Promise<void> {
    return this.cache.start();
  }

  stop(): Promise<void> {
    return this.cache.stop();
  }

  async forOrganization(organizationId: string): Promise<CompiledPolicy[]> {
    return (await this.cache.get(organizationId, () => this.load(organizationId)))!;
  }

  /** Call inside the transaction that changed an organization's policies. */
  announceChange(organizationId: string): Promise<void> {
    return this.cache.announce(organizationId);
  }

  invalidate(organizationId: string): void {
    this.cache.invalidate(organizationId);
  }

  clear(): void {
    this.cache.clear();
  }

  /** Organizations currently cached (for tests and diagnostics). */
  get size(): number {
    return this.cache.size;
  }

  private async load(organizationId: string): Promise<CompiledPolicy[]> {
    const rows = await this.repo.listActiveForEvaluation(organizationId);
    return Object.freeze(rows.map((row) => compile(toPolicyInput(row)))) as CompiledPolicy[];
  }
}
