import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessGuard, PlatformModule } from '../../../libs/platform/src/index.js';
import { IdentityModule } from '../../../libs/identity/src/index.js';
import { AuditModule } from '../../../libs/governance/src/index.js';
import { AgentsModule } from '../../../libs/governance/src/agents/agents.module.js';
import { PoliciesModule } from '../../../libs/governance/src/policies/policies.module.js';
import { TracesModule } from '../../../libs/governance/src/traces/traces.module.js';

/** The HTTP service: every module, behind the global access guard (deny by default). */
@Module({
  imports: [PlatformModule, IdentityModule, AuditModule, AgentsModule, PoliciesModule, TracesModule],
  providers: [{ provide: APP_GUARD, useClass: AccessGuard }],
})
export class AppModule {}
