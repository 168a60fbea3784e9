import { Module } from '@nestjs/common';
import { BEARER_RESOLVER } from '#platform';
import { AuthService } from './auth/auth.service.js';
import { SsoEnforcement } from './auth/sso-enforcement.js';
import { MembersRepository } from './organizations/members.repository.js';
import { OrganizationsRepository } from './organizations/organizations.repository.js';
import { OrganizationDataRepository } from './organizations/organization-data.repository.js';
import { OrganizationErasureJob } from './organizations/organization-erasure.job.js';
import { OrganizationExportService } from './organizations/organization-export.service.js';
import { OrganizationsService } from './organizations/organizations.service.js';
import { AccessRevocations } from './sessions/access-revocations.js';
import { LoginEventsRepository } from './sessions/login-events.repository.js';
import { SessionService } from './sessions/session.service.js';
import { SessionsRepository } from './sessions/sessions.repository.js';
import { TokenService } from './sessions/token.service.js';
import { OneTimeTokenService } from './tokens/one-time-token.service.js';
import { OneTimeTokensRepository } from './tokens/one-time-tokens.repository.js';
import { UsersRepository } from './users/users.repository.js';

const shared = [
  UsersRepository,
  OrganizationsRepository,
  MembersRepository,
  OrganizationsService,
  OrganizationExportService,
  OrganizationErasureJob,
  SessionsRepository,
  AccessRevocations,
  LoginEventsRepository,
  TokenService,
  SessionService,
  OneTimeTokenService,
  SsoEnforcement,
  AuthService,
];

/** What the identity feature modules share: users, organizations, sessions, tokens and the login path. */
@Module({
  providers: [
    ...shared,
    // Read and written only through the services above: not exported.
    OrganizationDataRepository,
    OneTimeTokensRepository,
    { provide: BEARER_RESOLVER, useExisting: SessionService },
  ],
  exports: [...shared, BEARER_RESOLVER],
})
export class IdentityCoreModule {}
