import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DATABASE, type DatabaseHandle, InvalidatedCache, TransactionHost } from '#platform';
import { ApprovalPatternsRepository } from './approval-patterns.repository.js';
import { type PatternSignature, signatureHash } from './approval-pattern.signature.js';

export const APPROVAL_PATTERNS_CHANGED_CHANNEL = 'approval_patterns_changed';

/**
 * The active approval patterns of each organization, for ingestion: read once per organization into an
 * `InvalidatedCache` and dropped on every replica when a pattern is signed off or revoked, so a flagged trace
 * costs no query to check.
 */
@Injectable()
export class ActivePatterns implements OnModuleInit, OnModuleDestroy {
  private readonly cache: InvalidatedCache<Map<string, string>>;

  constructor(
    private readonly repo: ApprovalPatternsRepository,
    tx: TransactionHost,
    @Inject(DATABASE) handle: DatabaseHandle,
  ) {
    this.cache = new InvalidatedCache(APPROVAL_PATTERNS_CHANGED_CHANNEL, handle, tx);
  }

  onModuleInit(): Promise<void> {
    return this.cache.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.cache.stop();
  }

  /** The id of the active pattern with this signature, if there is one. */
  async match(organizationId: string, signature: PatternSignature): Promise<string | null> {
    const active = await this.cache.get(organizationId, () => this.repo.activeSignatures(organizationId));
    return active?.get(signatureHash(signature)) ?? null;
  }

  /** Call inside the transaction that activated or revoked one of the organization's patterns. */
  announceChange(organizationId: string): Promise<void> {
    return this.cache.announce(organizationId);
  }
}
