import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';

/** Session management and the caller's profile, organizations and preferences. */
@Module({
  imports: [IdentityCoreModule],
})
export class AccountModule {}
