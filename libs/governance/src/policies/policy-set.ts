import { Injectable } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import { TransactionHost } from '../../../platform/src/index.js';
import { compile, type CompiledPolicy } from './engine/index.js';
import { policies } from './policy.schema.js';

/** The compiled active policies of an organization, as trace ingestion evaluates them. */
export abstract class PolicySet {
  abstract forOrganization(organizationId: string): Promise<CompiledPolicy[]>;
}

/**
 * Reads and compiles the active policies on every call. The policies module replaces this with a cached set
 * that is invalidated on change (across replicas too).
 */
@Injectable()
export class UncachedPolicySet extends PolicySet {
  constructor(private readonly tx: TransactionHost) {
    super();
  }

  async forOrganization(organizationId: string): Promise<CompiledPolicy[]> {
    const rows = await this.tx.db
      .select()
      .from(policies)
      .where(and(eq(policies.organizationId, organizationId), eq(policies.isActive, true)));
    return rows.map((row) =>
      compile({
        id: row.id,
        name: row.name,
        outcome: row.outcome,
        conditions: row.conditions,
        match: row.match,
        agentIds: row.agentIds,
        priority: row.priority,
        isActive: row.isActive,
      }),
    );
  }
}
