import { Injectable, Logger } from '@nestjs/common';
import { type Actor, type ApiKeyResolver, Clock, safeEqual, sha256Hex } from '#platform';
import type { ApiKeyScope } from './api-key.schema.js';
import { ApiKeysRepository, type WorkspaceKeyPrincipal } from './api-keys.repository.js';
import { isWellFormedWorkspaceKey, WORKSPACE_KEY_PREFIX } from './workspace-key.js';

/** `lastUsedAt` is recorded at most this often per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Resolves `svc_live_` keys for the access guard. Each request reads the key afresh (one indexed lookup joined
 * with the organization for its plan), so a revocation or scope change applies to the next request.
 */
@Injectable()
export class WorkspaceKeyResolver implements ApiKeyResolver {
  readonly prefix = WORKSPACE_KEY_PREFIX;
  private readonly logger = new Logger('WorkspaceKeys');
  /** Keys whose lastUsedAt write is in flight, so that a burst of requests issues one write. */
  private readonly touching = new Set<string>();

  constructor(
    private readonly repo: ApiKeysRepository,
    private readonly clock: Clock,
  ) {}

  async resolveKey(key: string): Promise<Actor | null> {
    if (!isWellFormedWorkspaceKey(key)) return null;
    const keyHash = sha256Hex(key);
    const found = await this.repo.findPrincipalByHash(keyHash);
    // The lookup is by hash; the constant-time check keeps any later change to it (a prefix lookup, say) safe.
    if (!found || !safeEqual(found.keyHash, keyHash) || found.revokedAt) return null;
    this.recordUse(found);
    return {
      type: 'api_key',
      credential: 'workspaceKey',
      organizationId: found.organizationId,
      plan: found.plan,
      userId: found.createdBy,
      email: null,
      role: null,
      keyId: found.id,
      scope: actorScope(found.scope),
    };
  }

  /** Fire-and-forget: the request never waits for, or fails because of, this bookkeeping write. */
  private recordUse(key: WorkspaceKeyPrincipal): void {
    const now = this.clock.nowMs();
    if (key.lastUsedAt && now - key.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    if (this.touching.has(key.id)) return;
    this.touching.add(key.id);
    void this.repo
      .touchLastUsed(key.organizationId, key.id, new Date(now), new Date(now - LAST_USED_RESOLUTION_MS))
      .catch((err: unknown) =>
        this.logger.warn({ keyId: key.id, error: (err as Error).message }, 'Could not record key use'),
      )
      .finally(() => this.touching.delete(key.id));
  }
}

function actorScope(scope: ApiKeyScope): NonNullable<Actor['scope']> {
  const out: NonNullable<Actor['scope']> = { readOnly: scope.readOnly === true };
  if (scope.agentIds?.length) out.agentIds = [...scope.agentIds];
  return out;
}
