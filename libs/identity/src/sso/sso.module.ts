import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';
import { OidcConfigurations } from './oidc-configurations.js';
import { SsoConfigController } from './sso-config.controller.js';
import { SsoConfigService } from './sso-config.service.js';
import { SsoDomainsRepository } from './sso-domains.repository.js';
import { SsoLoginController } from './sso-login.controller.js';
import { SsoLoginService } from './sso-login.service.js';

/** Enterprise single sign-on: the configuration API and OIDC sign-in (next: SAML and social login). */
@Module({
  imports: [IdentityCoreModule],
  controllers: [SsoConfigController, SsoLoginController],
  providers: [SsoDomainsRepository, SsoConfigService, OidcConfigurations, SsoLoginService],
  exports: [SsoConfigService, SsoDomainsRepository],
})
export class SsoModule {}
