import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';
import { SsoConfigController } from './sso-config.controller.js';
import { SsoConfigService } from './sso-config.service.js';
import { SsoDomainsRepository } from './sso-domains.repository.js';

/** Enterprise single sign-on: the configuration API (next: OIDC and SAML sign-in). */
@Module({
  imports: [IdentityCoreModule],
  controllers: [SsoConfigController],
  providers: [SsoDomainsRepository, SsoConfigService],
  exports: [SsoConfigService, SsoDomainsRepository],
})
export class SsoModule {}
