import { Module } from '@nestjs/common';
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
export class PoliciesModule {}
