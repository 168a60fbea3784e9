import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  type Page,
  PaginationQueryDto,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { SSO_REQUIRED } from '../auth/auth.errors.js';
import { UserDto } from '../users/user.mapper.js';
import {
  LoginActivityDto,
  SwitchOrgDto,
  SwitchOrgResultDto,
  UpdateProfileDto,
  UserOrganizationDto,
} from './dto/profile.dto.js';
import { PREFERENCES_MAX_BYTES, PREFERENCES_MAX_DEPTH, type Preferences } from './preferences-merge.js';
import { LOGIN_ACTIVITY_PAGE, ProfileService } from './profile.service.js';
import { SessionsManagementService } from './sessions-management.service.js';

const PREFERENCES_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  example: { notifications: { weeklyDigest: false }, theme: 'dark' },
} as const;

@ApiTags('Auth')
@Controller('auth')
@ApiErrors([401])
export class ProfileController {
  constructor(
    private readonly profile: ProfileService,
    private readonly sessions: SessionsManagementService,
  ) {}

  @Get('me/orgs')
  @Access()
  @ApiOperation({
    summary: 'The organizations the caller belongs to',
    description: 'Organizations with an active membership of the caller, oldest membership first.',
  })
  @ApiEnvelope(UserOrganizationDto, { isArray: true })
  organizations(@CurrentActor() actor: Actor): Promise<UserOrganizationDto[]> {
    return this.profile.organizationsOf(actor);
  }

  @Post('switch-org')
  @Access()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Get a token for another organization of the caller',
    description:
      'Mints a token bound to an organization where the caller’s membership is active; the presented token stays ' +
      'valid. Writes `auth.org_switched` in the target organization; its id is the new session id.',
  })
  @ApiEnvelope(SwitchOrgResultDto)
  @ApiErrors([400, 403, 404], {
    403:
      `FORBIDDEN (the presented session came through another organization’s SSO); ${SSO_REQUIRED}: into an ` +
      'organization that enforces SSO for the caller’s address',
    404: 'NOT_FOUND (unknown organization, or no active membership of the caller in it)',
  })
  switchOrganization(
    @CurrentActor() actor: Actor,
    @Body() dto: SwitchOrgDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SwitchOrgResultDto> {
    return this.sessions.switchOrganization(actor, dto.organizationId, meta);
  }

  @Patch('profile')
  @Access({ accountWide: true })
  @ApiOperation({
    summary: 'Update the caller’s name, locale or time zone',
    description:
      '`locale` is a BCP 47 tag (stored in canonical form), `timezone` an IANA zone name. Writes `user.profile_updated` ' +
      'when something changes.',
  })
  @ApiEnvelope(UserDto)
  @ApiErrors([400])
  updateProfile(
    @CurrentActor() actor: Actor,
    @Body() dto: UpdateProfileDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<UserDto> {
    return this.profile.updateProfile(actor, dto, meta);
  }

  @Get('me/preferences')
  @Access()
  @ApiOperation({ summary: 'The caller’s dashboard preferences' })
  @ApiOkResponse({
    description: '`{success: true, data: <preferences object>}`',
    schema: {
      type: 'object',
      properties: { success: { type: 'boolean', enum: [true] }, data: PREFERENCES_SCHEMA },
    },
  })
  preferences(@CurrentActor() actor: Actor): Promise<Preferences> {
    return this.profile.preferences(actor);
  }

  @Patch('me/preferences')
  @Access({ accountWide: true })
  @ApiOperation({
    summary: 'Merge into the caller’s dashboard preferences',
    description:
      'The body is a JSON Merge Patch (RFC 7396): members merge recursively, `null` removes a member, other values ' +
      `replace. Patch and result are each limited to ${PREFERENCES_MAX_BYTES} bytes of JSON and ${PREFERENCES_MAX_DEPTH} ` +
      'levels of nesting. Returns the merged preferences. Writes `user.preferences_updated` naming the members touched.',
  })
  @ApiBody({ schema: PREFERENCES_SCHEMA })
  @ApiOkResponse({
    description: '`{success: true, data: <merged preferences>}`',
    schema: {
      type: 'object',
      properties: { success: { type: 'boolean', enum: [true] }, data: PREFERENCES_SCHEMA },
    },
  })
  @ApiErrors([400])
  updatePreferences(
    @CurrentActor() actor: Actor,
    // Free-form by design: typed as a plain object so the validation pipe passes it through; the service checks it.
    @Body() patch: Record<string, unknown>,
    @ReqMeta() meta: RequestMeta,
  ): Promise<Preferences> {
    return this.profile.updatePreferences(actor, patch, meta);
  }

  @Get('login-activity')
  @Access()
  @ApiOperation({
    summary: 'The caller’s login attempts',
    description: `Successful and failed logins on the caller’s account, newest first; limit default ${LOGIN_ACTIVITY_PAGE.limit}, at most ${LOGIN_ACTIVITY_PAGE.max} (larger values are clamped).`,
  })
  @ApiEnvelope(LoginActivityDto, { paginated: true })
  @ApiErrors([400])
  loginActivity(
    @CurrentActor() actor: Actor,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<LoginActivityDto>> {
    return this.profile.loginActivity(actor, query);
  }
}
