import { Body, Controller, Delete, Get, Param, Patch, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  DeletedDto,
  Endpoint,
  type Page,
  PaginationQueryDto,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { ChangeRoleDto, SuspendMemberDto, TeamMemberDto } from './dto/team-member.dto.js';
import { TEAM_DOCS as DOCS, TEAM_ERRORS as ERRORS, USER_ID } from './team.docs.js';
import { TeamService } from './team.service.js';

/** Members of the caller's organization. Mutations are serialised per organization. */
@ApiTags('Team')
@Controller('team')
@ApiErrors([401, 403])
export class TeamController {
  constructor(private readonly team: TeamService) {}

  @Get('members')
  @Endpoint({
    summary: 'List the members of the organization',
    description: DOCS.list,
    access: { roles: Permission.read },
    success: { model: TeamMemberDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<TeamMemberDto>> {
    return this.team.list(actor, query);
  }

  @Patch('members/:userId/role')
  @Endpoint({
    summary: 'Change a member’s role',
    description: DOCS.changeRole,
    access: { roles: Permission.manageTeam },
    params: [USER_ID],
    success: TeamMemberDto,
    errors: [400, 404],
    errorCodes: ERRORS.change,
  })
  changeRole(
    @CurrentActor() actor: Actor,
    @Param('userId') userId: string,
    @Body() dto: ChangeRoleDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<TeamMemberDto> {
    return this.team.changeRole(actor, userId, dto, meta);
  }

  @Patch('members/:userId/status')
  @Endpoint({
    summary: 'Suspend a member',
    description: DOCS.suspend,
    access: { roles: Permission.manageTeam },
    params: [USER_ID],
    success: TeamMemberDto,
    errors: [400, 404],
    errorCodes: ERRORS.change,
  })
  suspend(
    @CurrentActor() actor: Actor,
    @Param('userId') userId: string,
    @Body() _dto: SuspendMemberDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<TeamMemberDto> {
    return this.team.suspend(actor, userId, meta);
  }

  @Patch('members/:userId/reactivate')
  @Endpoint({
    summary: 'Reactivate a suspended member',
    description: DOCS.reactivate,
    access: { roles: Permission.manageTeam },
    params: [USER_ID],
    success: TeamMemberDto,
    errors: [404],
    errorCodes: ERRORS.reactivate,
  })
  reactivate(
    @CurrentActor() actor: Actor,
    @Param('userId') userId: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<TeamMemberDto> {
    return this.team.reactivate(actor, userId, meta);
  }

  @Delete('members/:userId')
  @Endpoint({
    summary: 'Remove a member',
    description: DOCS.remove,
    access: { roles: Permission.manageTeam },
    params: [USER_ID],
    success: DeletedDto,
    errors: [400, 404],
    errorCodes: ERRORS.change,
  })
  remove(
    @CurrentActor() actor: Actor,
    @Param('userId') userId: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.team.remove(actor, userId, meta);
  }
}
