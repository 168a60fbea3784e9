import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type Actor, CurrentActor, Endpoint, ReqMeta, type RequestMeta } from '#platform';
import { AUTH_DOCS as DOCS, AUTH_ERRORS as ERRORS, LOGIN_RESPONSE } from './auth.docs.js';
import { AuthService } from './auth.service.js';
import {
  LoginDto,
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
  @Endpoint({
    summary: 'Sign up in one call',
    description: DOCS.register,
    access: 'public',
    success: { model: RegisterResultDto, status: 201 },
    errors: [400, 409],
    errorCodes: ERRORS.register,
  })
  register(@Body() dto: RegisterDto, @ReqMeta() meta: RequestMeta): Promise<RegisterResultDto> {
    return this.auth.register(dto, meta);
  }

  @Post('login')
  @HttpCode(200)
  @Endpoint({
    summary: 'Log in with e-mail and password',
    description: DOCS.login,
    access: 'public',
    ...LOGIN_RESPONSE,
    errors: [400, 401, 403],
    errorCodes: ERRORS.login,
  })
  login(@Body() dto: LoginDto, @ReqMeta() meta: RequestMeta): Promise<LoginResultDto | MfaChallengeDto> {
    return this.auth.login(dto, meta);
  }

  @Post('logout')
  @HttpCode(200)
  @Endpoint({
    summary: 'Log out',
    description: DOCS.logout,
    access: { allowDeactivated: true },
    success: MessageDto,
    errors: [401],
  })
  logout(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<MessageDto> {
    return this.auth.logout(actor, meta);
  }

  @Get('me')
  @Endpoint({
    summary: 'The caller, the active organization and the role in it',
    access: {},
    success: MeDto,
    errors: [401],
  })
  me(@CurrentActor() actor: Actor): Promise<MeDto> {
    return this.auth.me(actor);
  }
}
