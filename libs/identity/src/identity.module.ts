import { Module } from '@nestjs/common';
import { AccountModule } from './account/account.module.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AuthController } from './auth/auth.controller.js';
import { IdentityCoreModule } from './identity-core.module.js';
import { MfaModule } from './mfa/mfa.module.js';
import { OrganizationsController } from './organizations/organizations.controller.js';

@Module({
  imports: [IdentityCoreModule, MfaModule, ApiKeysModule, AccountModule],
  controllers: [AuthController, OrganizationsController],
  exports: [IdentityCoreModule],
})
export class IdentityModule {}
