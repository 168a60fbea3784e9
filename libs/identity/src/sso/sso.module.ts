import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';
import { OidcConfigurations } from './oidc-configurations.js';
import { SsoConfigController } from './sso-config.controller.js';
import { SsoConfigService } from './sso-config.service.js';
import { SsoDomainsController } from './sso-domains.controller.js';
import { SsoDomainsRepository } from './sso-domains.repository.js';
import { SsoDomainsService } from './sso-domains.service.js';
import { SsoEnforcementSource } from './sso-enforcement.policy.js';
import { SsoLoginController } from './sso-login.controller.js';
import { SsoLoginService } from './sso-login.service.js';
import { SocialLoginController } from './social-login.controller.js';
import { SocialLoginService } from './social-login.service.js';
import { SignInHandOff } from './sign-in-hand-off.js';
import { SamlController } from './saml.controller.js';
import { SamlLoginService } from './saml-login.service.js';
import { SsoSignIn } from './sso-sign-in.js';

/** Sign-in from elsewhere: the SSO configuration API, OIDC and SAML sign-in (with SAML single logout), social login. */
@Module({
  imports: [IdentityCoreModule],
  controllers: [
    SsoConfigController,
    SsoDomainsController,
    SsoLoginController,
    SamlController,
    SocialLoginController,
  ],
  providers: [
    SsoDomainsRepository,
    SsoDomainsService,
    SsoConfigService,
    OidcConfigurations,
    SsoSignIn,
    SamlLoginService,
    SsoLoginService,
    SocialLoginService,
    SignInHandOff,
    SsoEnforcementSource,
  ],
  exports: [SsoConfigService, SsoDomainsRepository],
})
export class SsoModule {}
