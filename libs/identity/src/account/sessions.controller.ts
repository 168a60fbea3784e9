import { Body, Controller, Get, HttpCode, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type Actor, ApiErrors, CurrentActor, Endpoint, ReqMeta, type RequestMeta } from '#platform';
import {
  RevokedCountDto,
  RevokeSessionDto,
  SessionDto,
  SessionTimeoutDto,
  SessionTokenDto,
} from './dto/sessions.dto.js';
import { SessionsManagementService } from './sessions-management.service.js';
import { SESSION_DOCS as DOCS, SESSION_ERRORS as ERRORS } from './sessions.docs.js';

@ApiTags('Auth')
@Controller('auth')
@ApiErrors([401])
export class SessionsController {
  constructor(private readonly sessions: SessionsManagementService) {}

  @Post('refresh')
  @HttpCode(200)
  @Endpoint({
    summary: 'Exchange the current token for a new one',
    description: DOCS.refresh,
    access: { allowDeactivated: true },
    success: SessionTokenDto,
    errors: [403],
    errorCodes: ERRORS.refresh,
  })
  refresh(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<SessionTokenDto> {
    return this.sessions.refresh(actor, meta);
  }

  @Post('revoke-sessions')
  @HttpCode(200)
  @Endpoint({
    summary: 'Revoke every session of the caller',
    description: DOCS.revokeAll,
    access: { allowDeactivated: true },
    success: RevokedCountDto,
  })
  revokeAll(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<RevokedCountDto> {
    return this.sessions.revokeAll(actor, meta);
  }

  @Post('revoke-session')
  @HttpCode(200)
  @Endpoint({
    summary: 'Revoke one session of the caller',
    description: DOCS.revokeOne,
    access: { allowDeactivated: true },
    success: RevokedCountDto,
    errors: [400, 404],
    errorCodes: ERRORS.revokeOne,
  })
  revokeOne(
    @CurrentActor() actor: Actor,
    @Body() dto: RevokeSessionDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<RevokedCountDto> {
    return this.sessions.revokeOne(actor, dto.sessionId, meta);
  }

  @Get('sessions')
  @Endpoint({
    summary: 'The caller’s live sessions',
    description: DOCS.list,
    access: {},
    success: { model: SessionDto, isArray: true },
  })
  list(@CurrentActor() actor: Actor): Promise<SessionDto[]> {
    return this.sessions.list(actor);
  }

  @Patch('me/session-timeout')
  @Endpoint({
    summary: 'Set the lifetime of the caller’s future tokens',
    description: DOCS.setSessionTimeout,
    access: { accountWide: true },
    success: SessionTimeoutDto,
    errors: [400],
  })
  setSessionTimeout(
    @CurrentActor() actor: Actor,
    @Body() dto: SessionTimeoutDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SessionTimeoutDto> {
    return this.sessions.setSessionTimeout(actor, dto, meta);
  }
}
