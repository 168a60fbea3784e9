import { Injectable } from '@nestjs/common';
import type { AgentTraceStats } from './dto/agent.dto.js';

export type AgentTraceStatsSource = (organizationId: string, agentId: string) => Promise<AgentTraceStats>;

/**
 * Where an agent's trace counts come from. Traces depend on agents (a trace names its agent, the writer checks
 * it), so agents cannot import the traces module; the traces module provides the source when it starts instead.
 */
@Injectable()
export class AgentTraceStatsPort {
  private source: AgentTraceStatsSource | undefined;

  provide(source: AgentTraceStatsSource): void {
    this.source = source;
  }

  statsOf(organizationId: string, agentId: string): Promise<AgentTraceStats> {
    if (!this.source) throw new Error('No trace statistics: the traces module is not loaded');
    return this.source(organizationId, agentId);
  }
}
