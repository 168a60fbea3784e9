import { Module, type OnModuleInit } from '@nestjs/common';
import { ApiKeyResolverRegistry } from '#platform';
import { IdentityCoreModule } from '../identity-core.module.js';
import { AgentKeysRepository } from './agent-keys.repository.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import { StreamTokenController } from './stream-token.controller.js';
import { StreamTokenService } from './stream-token.service.js';
import { WorkspaceKeyResolver } from './workspace-key.resolver.js';
import { WorkspaceKeyAgents } from './workspace-key-agents.service.js';

/**
 * Workspace API keys (svc_live_) and stream tokens; the table of agent keys too, which the agents module (governance)
 * reaches through the exported AgentKeysRepository.
 */
@Module({
  imports: [IdentityCoreModule],
  controllers: [ApiKeysController, StreamTokenController],
  providers: [
    ApiKeysRepository,
    AgentKeysRepository,
    ApiKeysService,
    WorkspaceKeyResolver,
    StreamTokenService,
    WorkspaceKeyAgents,
  ],
  // WorkspaceKeyAgents to the agents module (governance): deleting an agent removes its id from the keys' scopes.
  exports: [StreamTokenService, AgentKeysRepository, WorkspaceKeyAgents],
})
export class ApiKeysModule implements OnModuleInit {
  constructor(
    private readonly registry: ApiKeyResolverRegistry,
    private readonly resolver: WorkspaceKeyResolver,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.resolver);
  }
}
