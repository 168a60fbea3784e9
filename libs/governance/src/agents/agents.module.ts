import { Global, Module, type OnModuleInit } from '@nestjs/common';
import { AgentDirectory, ApiKeyResolverRegistry } from '#platform';
import { ApiKeysModule } from '#identity';
import { AgentKeyResolver } from './agent-key.resolver.js';
import { AgentReferencesPort } from './agent-references.js';
import { AgentsController } from './agents.controller.js';
import { AgentTraceStatsPort } from './agent-trace-stats.js';
import { AgentsRepository } from './agents.repository.js';
import { AgentsService } from './agents.service.js';

/**
 * Agents and their keys (svc_agent_). Global so that identity's workspace keys can reach the AgentDirectory
 * port without importing governance; it is the only provider made visible that way.
 */
@Global()
@Module({
  imports: [ApiKeysModule],
  controllers: [AgentsController],
  providers: [
    AgentKeyResolver,
    AgentsRepository,
    AgentsService,
    AgentTraceStatsPort,
    AgentReferencesPort,
    { provide: AgentDirectory, useExisting: AgentsService },
  ],
  // To the traces module: the live-agent query of the trace writer, and the port its statistics are given through;
  // to the policies module: the port through which an agent's deletion removes its id from their agentIds.
  exports: [AgentDirectory, AgentsRepository, AgentTraceStatsPort, AgentReferencesPort],
})
export class AgentsModule implements OnModuleInit {
  constructor(
    private readonly registry: ApiKeyResolverRegistry,
    private readonly resolver: AgentKeyResolver,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.resolver);
  }
}
