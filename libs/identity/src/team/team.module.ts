import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';
import { InvitationsController } from './invitations.controller.js';
import { InvitationsRepository } from './invitations.repository.js';
import { InvitationsService } from './invitations.service.js';
import { TeamController } from './team.controller.js';
import { TeamService } from './team.service.js';

/** Team members (roles, suspension, removal) and invitations. */
@Module({
  imports: [IdentityCoreModule],
  controllers: [TeamController, InvitationsController],
  providers: [TeamService, InvitationsRepository, InvitationsService],
})
export class TeamModule {}
