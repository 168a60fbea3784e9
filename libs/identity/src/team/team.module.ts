import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';

/** Team members (roles, suspension, removal) and invitations. */
@Module({
  imports: [IdentityCoreModule],
})
export class TeamModule {}
