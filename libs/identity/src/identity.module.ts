import { Module } from '@nestjs/common';
import { BEARER_RESOLVER } from '../../platform/src/index.js';
import { AuditModule } from '../../governance/src/index.js';
import { AuthController } from './auth/auth.controller.js';
import { AuthService } from './auth/auth.service.js';
import { OrganizationsController } from './organizations/organizations.controller.js';
import { OrganizationsRepository } from './organizations/organizations.repository.js';
import { OrganizationsService } from './organizations/organizations.service.js';
import { SessionService } from './sessions/session.service.js';
import { SessionsRepository } from './sessions/sessions.repository.js';
import { TokenService } from './sessions/token.service.js';
import { UsersRepository } from './users/users.repository.js';

@Module({
  imports: [AuditModule],
  controllers: [AuthController, OrganizationsController],
  providers: [
    UsersRepository,
    OrganizationsRepository,
    OrganizationsService,
    SessionsRepository,
    TokenService,
    SessionService,
    { provide: BEARER_RESOLVER, useExisting: SessionService },
    AuthService,
  ],
  exports: [BEARER_RESOLVER, OrganizationsService, SessionService, TokenService],
})
export class IdentityModule {}
