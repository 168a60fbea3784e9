import { Injectable } from '@nestjs/common';
import type { AuditTarget } from '#platform';

/**
 * An audit entry a record's change calls for, written by the agent's deletion once every row lock is taken (the
 * organization's write lock, which the audit append takes, comes after the row locks in every audited change).
 */
export interface AgentReferenceChange {
  eventType: string;
  target: AuditTarget;
  metadata: Record<string, unknown>;
}

/**
 * Removes a deleted agent's id from the holder's records of one organization, in the deleting transaction, and
 * returns the audit entries of the records it changed, without writing them.
 */
export type AgentReferenceHolder = (
  organizationId: string,
  agentId: string,
  at: Date,
) => Promise<AgentReferenceChange[]>;

/**
 * The records of other governance modules that name agents in lists (policies' agentIds). Those modules depend on
 * agents, so agents cannot import them; each registers its holder here when it starts, as the traces module gives
 * the trace statistics through AgentTraceStatsPort.
 */
@Injectable()
export class AgentReferencesPort {
  private readonly holders: AgentReferenceHolder[] = [];

  register(holder: AgentReferenceHolder): void {
    this.holders.push(holder);
  }

  /** Every holder in turn (one transaction has one connection): the changes of all of them. */
  async detach(organizationId: string, agentId: string, at: Date): Promise<AgentReferenceChange[]> {
    const changes: AgentReferenceChange[] = [];
    for (const holder of this.holders) changes.push(...(await holder(organizationId, agentId, at)));
    return changes;
  }
}
