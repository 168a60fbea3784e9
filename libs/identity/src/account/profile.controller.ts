import { Body, Controller, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  type Page,
  PaginationQueryDto,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { UserDto } from '../users/user.mapper.js';
import {
  LoginActivityDto,
  SwitchOrgDto,
  SwitchOrgResultDto,
  UpdateProfileDto,
  UserOrganizationDto,
} from './dto/profile.dto.js';
import type { Preferences } from './preferences-merge.js';
import {
  PREFERENCES_BODY,
  PROFILE_DOCS as DOCS,
  PROFILE_ERRORS as ERRORS,
  PROFILE_RESPONSES as RESPONSES,
} from './profile.docs.js';
import { ProfileService } from './profile.service.js';
import { SessionsManagementService } from './sessions-management.service.js';

@ApiTags('Auth')
@Controller('auth')
@ApiErrors([401])
export class ProfileController {
  constructor(
    private readonly profile: ProfileService,
    private readonly sessions: SessionsManagementService,
  ) {}

  @Get('me/orgs')
  @Endpoint({
    summary: 'The organizations the caller belongs to',
    description: DOCS.organizations,
    access: {},
    success: { model: UserOrganizationDto, isArray: true },
  })
  organizations(@CurrentActor() actor: Actor): Promise<UserOrganizationDto[]> {
    return this.profile.organizationsOf(actor);
  }

  @Post('switch-org')
  @HttpCode(200)
  @Endpoint({
    summary: 'Get a token for another organization of the caller',
    description: DOCS.switchOrganization,
    access: {},
    success: SwitchOrgResultDto,
    errors: [400, 403, 404],
    errorCodes: ERRORS.switchOrganization,
  })
  switchOrganization(
    @CurrentActor() actor: Actor,
    @Body() dto: SwitchOrgDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SwitchOrgResultDto> {
    return this.sessions.switchOrganization(actor, dto.organizationId, meta);
  }

  @Patch('profile')
  @Endpoint({
    summary: 'Update the caller’s name, locale or time zone',
    description: DOCS.updateProfile,
    access: { accountWide: true },
    success: UserDto,
    errors: [400],
  })
  updateProfile(
    @CurrentActor() actor: Actor,
    @Body() dto: UpdateProfileDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<UserDto> {
    return this.profile.updateProfile(actor, dto, meta);
  }

  @Get('me/preferences')
  @Endpoint({
    summary: 'The caller’s dashboard preferences',
    access: {},
    responses: RESPONSES.preferences,
  })
  preferences(@CurrentActor() actor: Actor): Promise<Preferences> {
    return this.profile.preferences(actor);
  }

  @Patch('me/preferences')
  @Endpoint({
    summary: 'Merge into the caller’s dashboard preferences',
    description: DOCS.updatePreferences,
    access: { accountWide: true },
    body: PREFERENCES_BODY,
    responses: RESPONSES.updatePreferences,
    errors: [400],
  })
  updatePreferences(
    @CurrentActor() actor: Actor,
    // Free-form by design: typed as a plain object so the validation pipe passes it through; the service checks it.
    @Body() patch: Record<string, unknown>,
    @ReqMeta() meta: RequestMeta,
  ): Promise<Preferences> {
    return this.profile.updatePreferences(actor, patch, meta);
  }

  @Get('login-activity')
  @Endpoint({
    summary: 'The caller’s login attempts',
    description: DOCS.loginActivity,
    access: {},
    success: { model: LoginActivityDto, paginated: true },
    errors: [400],
  })
  loginActivity(
    @CurrentActor() actor: Actor,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<LoginActivityDto>> {
    return this.profile.loginActivity(actor, query);
  }
}
