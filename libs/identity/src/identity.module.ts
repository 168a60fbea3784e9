import { Module } from '@nestjs/common';
import { BillingController } from './billing/billing.controller.js';
import { AccountModule } from './account/account.module.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AuthController } from './auth/auth.controller.js';
import { EmailFlowsController } from './auth/email-flows.controller.js';
import { EmailFlowsService } from './auth/email-flows.service.js';
import { PlaceholdersController } from './auth/placeholders.controller.js';
import { IdentityCoreModule } from './identity-core.module.js';
import { MfaModule } from './mfa/mfa.module.js';
import { TeamModule } from './team/team.module.js';
import { OrganizationsController } from './organizations/organizations.controller.js';
import { ScimModule } from './scim/scim.module.js';
import { SsoModule } from './sso/sso.module.js';

@Module({
  imports: [IdentityCoreModule, MfaModule, ApiKeysModule, AccountModule, TeamModule, SsoModule, ScimModule],
  controllers: [
    AuthController,
    EmailFlowsController,
    PlaceholdersController,
    OrganizationsController,
    BillingController,
  ],
  providers: [EmailFlowsService],
  exports: [IdentityCoreModule],
})
export class IdentityModule {}
