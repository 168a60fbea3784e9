import { Body, Controller, Delete, Get, Param, Patch, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  DeletedDto,
  objectIdParam,
  type Page,
  PaginationQueryDto,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { ChangeRoleDto, SuspendMemberDto, TeamMemberDto } from './dto/team-member.dto.js';
import { TeamService } from './team.service.js';

const USER_ID_PARAM = objectIdParam('userId', 'User id of the member');
const NOT_FOUND = { 404: 'NOT_FOUND (no member with this user id in the caller’s organization)' };
const OWNER_RULE = {
  403: 'FORBIDDEN (role lacks permission; only an owner may grant the owner role or change an owner)',
};
const LAST_OWNER =
  'VALIDATION_ERROR (invalid body, or the change would leave the organization without an active owner)';

/** Members of the caller's organization. Mutations are serialised per organization. */
@ApiTags('Team')
@Controller('team')
@ApiErrors([401, 403])
export class TeamController {
  constructor(private readonly team: TeamService) {}

  @Get('members')
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'List the members of the organization',
    description:
      'Any role. Active and suspended members, oldest membership first. Paginated: limit default 100, max 200.',
  })
  @ApiEnvelope(TeamMemberDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<TeamMemberDto>> {
    return this.team.list(actor, query);
  }

  @Patch('members/:userId/role')
  @Access({ roles: Permission.manageTeam })
  @ApiOperation({
    summary: 'Change a member’s role',
    description:
      'Owner or admin; only an owner may grant the owner role or change an owner. Several owners are allowed, but ' +
      'the organization always keeps one active owner. Takes effect on the member’s next request. Writes ' +
      '`team.member.role_changed` with `{from, to}` (nothing when the role is unchanged).',
  })
  @ApiParam(USER_ID_PARAM)
  @ApiEnvelope(TeamMemberDto)
  @ApiErrors([400, 404], { ...NOT_FOUND, ...OWNER_RULE, 400: LAST_OWNER })
  changeRole(
    @CurrentActor() actor: Actor,
    @Param('userId') userId: string,
    @Body() dto: ChangeRoleDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<TeamMemberDto> {
    return this.team.changeRole(actor, userId, dto, meta);
  }

  @Patch('members/:userId/status')
  @Access({ roles: Permission.manageTeam })
  @ApiOperation({
    summary: 'Suspend a member',
    description:
      'Owner or admin; only an owner may suspend an owner, and the last active owner cannot be suspended. The body ' +
      'is optional (`{isActive: false}` or none). The member’s open sessions get 401 ACCOUNT_DEACTIVATED and login ' +
      'skips this organization until reactivation. Writes `team.member.suspended` (nothing when already suspended).',
  })
  @ApiParam(USER_ID_PARAM)
  @ApiEnvelope(TeamMemberDto)
  @ApiErrors([400, 404], { ...NOT_FOUND, ...OWNER_RULE, 400: LAST_OWNER })
  suspend(
    @CurrentActor() actor: Actor,
    @Param('userId') userId: string,
    @Body() _dto: SuspendMemberDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<TeamMemberDto> {
    return this.team.suspend(actor, userId, meta);
  }

  @Patch('members/:userId/reactivate')
  @Access({ roles: Permission.manageTeam })
  @ApiOperation({
    summary: 'Reactivate a suspended member',
    description:
      'Owner or admin; only an owner may reactivate an owner. The same membership, with its role, becomes active ' +
      'again. Writes `team.member.reactivated` (nothing when already active).',
  })
  @ApiParam(USER_ID_PARAM)
  @ApiEnvelope(TeamMemberDto)
  @ApiErrors([404], { ...NOT_FOUND, ...OWNER_RULE })
  reactivate(
    @CurrentActor() actor: Actor,
    @Param('userId') userId: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<TeamMemberDto> {
    return this.team.reactivate(actor, userId, meta);
  }

  @Delete('members/:userId')
  @Access({ roles: Permission.manageTeam })
  @ApiOperation({
    summary: 'Remove a member',
    description:
      'Owner or admin; only an owner may remove an owner, and the last active owner cannot be removed. Deletes the ' +
      'membership; the user account survives with its other organizations. The member’s sessions in this ' +
      'organization are refused from the next request. Writes `team.member.removed`.',
  })
  @ApiParam(USER_ID_PARAM)
  @ApiEnvelope(DeletedDto)
  @ApiErrors([400, 404], { ...NOT_FOUND, ...OWNER_RULE, 400: LAST_OWNER })
  remove(
    @CurrentActor() actor: Actor,
    @Param('userId') userId: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.team.remove(actor, userId, meta);
  }
}
