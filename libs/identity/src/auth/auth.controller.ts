import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  Public,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { AuthService } from './auth.service.js';
import { SSO_REQUIRED } from './auth.errors.js';
import {
  LoginDto,
  ApiLoginResponse,
  LoginResultDto,
  MeDto,
  MessageDto,
  MfaChallengeDto,
  RegisterDto,
  RegisterResultDto,
} from './dto/auth.dto.js';

@ApiTags('Auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('register')
  @Public()
  @ApiOperation({
    summary: 'Sign up in one call',
    description:
      'Creates the user, an organization on the default plan with the user as owner, and a session. Writes `auth.register`.',
  })
  @ApiEnvelope(RegisterResultDto, { status: 201 })
  @ApiErrors([400, 409], { 409: 'EMAIL_IN_USE (the e-mail address is already registered)' })
  register(@Body() dto: RegisterDto, @ReqMeta() meta: RequestMeta): Promise<RegisterResultDto> {
    return this.auth.register(dto, meta);
  }

  @Post('login')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Log in with e-mail and password',
    description:
      'Writes `auth.login` with `metadata.method = "password"`. The session opens in the oldest active membership ' +
      'whose organization does not enforce SSO for the address. When every one does, 403 `SSO_REQUIRED`, except ' +
      'for an owner with TOTP: the break-glass path answers the MFA step, and `mfa/login` writes ' +
      '`auth.sso_break_glass` and mails the other owners.',
  })
  @ApiLoginResponse()
  @ApiErrors([400, 401, 403], {
    401:
      'INVALID_CREDENTIALS (wrong e-mail or password, same body either way), ACCOUNT_DEACTIVATED (no active ' +
      'membership), ORGANIZATION_DELETED (every active membership is in a deleted organization)',
    403: SSO_REQUIRED,
  })
  login(@Body() dto: LoginDto, @ReqMeta() meta: RequestMeta): Promise<LoginResultDto | MfaChallengeDto> {
    return this.auth.login(dto, meta);
  }

  @Post('logout')
  @Access({ allowDeactivated: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Log out',
    description: 'Blacklists the caller’s jti for its remaining lifetime. Writes `auth.logout`.',
  })
  @ApiEnvelope(MessageDto)
  @ApiErrors([401])
  logout(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<MessageDto> {
    return this.auth.logout(actor, meta);
  }

  @Get('me')
  @Access()
  @ApiOperation({ summary: 'The caller, the active organization and the role in it' })
  @ApiEnvelope(MeDto)
  @ApiErrors([401])
  me(@CurrentActor() actor: Actor): Promise<MeDto> {
    return this.auth.me(actor);
  }
}
