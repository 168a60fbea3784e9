import { Body, Controller, Get, HttpCode, Patch, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import {
  RevokedCountDto,
  RevokeSessionDto,
  SessionDto,
  SessionTimeoutDto,
  SessionTokenDto,
} from './dto/sessions.dto.js';
import { SESSIONS_LIST_CAP, SessionsManagementService } from './sessions-management.service.js';
import { SSO_REQUIRED } from '../auth/auth.errors.js';

@ApiTags('Auth')
@Controller('auth')
@ApiErrors([401])
export class SessionsController {
  constructor(private readonly sessions: SessionsManagementService) {}

  @Post('refresh')
  @Access({ allowDeactivated: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Exchange the current token for a new one',
    description:
      'Mints a token with a new jti (same organization, the user’s current session timeout) and revokes the presented ' +
      'jti at once: a token can be refreshed once. Writes `auth.token_refreshed`, whose id is the new session id. ' +
      'Once the organization enforces its SSO for the caller’s address, a session its SSO did not open is not ' +
      'renewed (403 `SSO_REQUIRED`), except an owner’s.',
  })
  @ApiEnvelope(SessionTokenDto)
  @ApiErrors([403], { 403: SSO_REQUIRED })
  refresh(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<SessionTokenDto> {
    return this.sessions.refresh(actor, meta);
  }

  @Post('revoke-sessions')
  @Access({ allowDeactivated: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke every session of the caller',
    description:
      'Blacklists every live jti of the user, in every organization, the current one included. ' +
      'Writes `auth.session_revoked` with `metadata.all = true` and the count.',
  })
  @ApiEnvelope(RevokedCountDto)
  revokeAll(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<RevokedCountDto> {
    return this.sessions.revokeAll(actor, meta);
  }

  @Post('revoke-session')
  @Access({ allowDeactivated: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke one session of the caller',
    description:
      '`sessionId` is the id of the audit entry that opened the session (as listed by GET /auth/sessions). ' +
      '`revoked` is 1, or 0 when the session was already revoked or has expired. Writes `auth.session_revoked`.',
  })
  @ApiEnvelope(RevokedCountDto)
  @ApiErrors([400, 404], { 404: 'NOT_FOUND (no such session of the caller)' })
  revokeOne(
    @CurrentActor() actor: Actor,
    @Body() dto: RevokeSessionDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<RevokedCountDto> {
    return this.sessions.revokeOne(actor, dto.sessionId, meta);
  }

  @Get('sessions')
  @Access()
  @ApiOperation({
    summary: 'The caller’s live sessions',
    description: `Unexpired, unrevoked sessions of the user in every organization, newest first, at most ${SESSIONS_LIST_CAP}.`,
  })
  @ApiEnvelope(SessionDto, { isArray: true })
  list(@CurrentActor() actor: Actor): Promise<SessionDto[]> {
    return this.sessions.list(actor);
  }

  @Patch('me/session-timeout')
  @Access({ accountWide: true })
  @ApiOperation({
    summary: 'Set the lifetime of the caller’s future tokens',
    description:
      'Applies to tokens minted afterwards (login, refresh, switch-org); tokens already issued keep their expiry. ' +
      'Writes `auth.session_timeout_changed` when the value changes.',
  })
  @ApiEnvelope(SessionTimeoutDto)
  @ApiErrors([400])
  setSessionTimeout(
    @CurrentActor() actor: Actor,
    @Body() dto: SessionTimeoutDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SessionTimeoutDto> {
    return this.sessions.setSessionTimeout(actor, dto, meta);
  }
}
