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
import { SsoLoginStatesRepository } from './sso-login-states.repository.js';
import { SsoLoginService } from './sso-login.service.js';
import { SocialLoginController } from './social-login.controller.js';
import { SocialLoginService } from './social-login.service.js';
import { SignInHandOff } from './sign-in-hand-off.js';
import { SamlController } from './saml.controller.js';
import { SamlAssertionsRepository } from './saml-assertions.repository.js';
import { SamlLoginService } from './saml-login.service.js';
import { SamlLogoutService } from './saml-logout.service.js';
import { SamlRequestsPurgeJob } from './saml-requests-purge.job.js';
import { SamlRequestsRepository } from './saml-requests.repository.js';
import { SamlServiceProvider } from './saml-service-provider.js';
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
    SamlRequestsRepository,
    SamlAssertionsRepository,
    SamlServiceProvider,
    SamlLoginService,
    SamlLogoutService,
    SamlRequestsPurgeJob,
    SsoLoginStatesRepository,
    SsoLoginService,
    SocialLoginService,
    SignInHandOff,
    SsoEnforcementSource,
  ],
  exports: [SsoConfigService, SsoDomainsRepository],
})
export class SsoModule {}
