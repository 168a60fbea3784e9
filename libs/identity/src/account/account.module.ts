import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';
import { ProfileController } from './profile.controller.js';
import { ProfileService } from './profile.service.js';
import { RevokedTokensPurgeJob } from './revoked-tokens-purge.job.js';
import { SessionsController } from './sessions.controller.js';
import { SessionsManagementService } from './sessions-management.service.js';

/** Session management and the caller's profile, organizations and preferences. */
@Module({
  imports: [IdentityCoreModule],
  controllers: [SessionsController, ProfileController],
  providers: [SessionsManagementService, ProfileService, RevokedTokensPurgeJob],
})
export class AccountModule {}
