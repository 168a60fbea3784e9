import type { CompiledPolicy } from './engine/index.js';

/**
 * The compiled active policies of an organization, as trace ingestion evaluates them. The policies module
 * provides `CachedPolicySet` (policy-cache.ts), invalidated on every change, across replicas too.
 */
export abstract class PolicySet {
  abstract forOrganization(organizationId: string): Promise<CompiledPolicy[]>;
}
