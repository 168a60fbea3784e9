import { Module, type OnModuleInit } from '@nestjs/common';
import { AgentReferencesPort } from '../agents/agent-references.js';
import { AgentsModule } from '../agents/agents.module.js';
import { PoliciesController } from './policies.controller.js';
import { PoliciesRepository } from './policies.repository.js';
import { PoliciesService } from './policies.service.js';
import { CachedPolicySet } from './policy-cache.js';
import { PolicySet } from './policy-set.js';

/** Policies: the condition engine, CRUD, templates, and the compiled set that ingestion evaluates. */
@Module({
  imports: [AgentsModule],
  controllers: [PoliciesController],
  providers: [
    PoliciesRepository,
    PoliciesService,
    CachedPolicySet,
    { provide: PolicySet, useExisting: CachedPolicySet },
  ],
  exports: [PolicySet, PoliciesRepository],
})
export class PoliciesModule implements OnModuleInit {
  constructor(
    private readonly references: AgentReferencesPort,
    private readonly policies: PoliciesService,
  ) {}

  /** Agents cannot import this module (it imports agents): deleting an agent reaches the policies through the port. */
  onModuleInit(): void {
    this.references.register((organizationId, agentId, at) =>
      this.policies.detachAgent(organizationId, agentId, at),
    );
  }
}
