import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessGuard, PlatformModule } from '../../../libs/platform/src/index.js';
import { IdentityModule } from '../../../libs/identity/src/index.js';
import { AuditModule } from '../../../libs/governance/src/index.js';

/** The HTTP service: every module, behind the global access guard (deny by default). */
@Module({
  imports: [PlatformModule, IdentityModule, AuditModule],
  providers: [{ provide: APP_GUARD, useClass: AccessGuard }],
})
export class AppModule {}
