import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';
import { ScimAuthGuard } from './scim-auth.guard.js';
import { ScimGroupsService } from './scim-groups.service.js';
import { ScimTokenController } from './scim-token.controller.js';
import { ScimTokensRepository } from './scim-tokens.repository.js';
import { ScimTokensService } from './scim-tokens.service.js';
import { ScimUsersRepository } from './scim-users.repository.js';
import { ScimUsersService } from './scim-users.service.js';
import { ScimController } from './scim.controller.js';

/**
 * SCIM 2.0 provisioning (docs/identity-administrators.md, "SCIM provisioning"; test/scim-*.e2e-spec.ts): the token API,
 * discovery, Users and the role-bucket Groups.
 */
@Module({
  imports: [IdentityCoreModule],
  controllers: [ScimTokenController, ScimController],
  providers: [
    ScimTokensRepository,
    ScimTokensService,
    ScimAuthGuard,
    ScimUsersRepository,
    ScimUsersService,
    ScimGroupsService,
  ],
})
export class ScimModule {}
