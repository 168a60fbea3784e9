import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type Actor, CurrentActor, Endpoint, ReqMeta, type RequestMeta } from '#platform';
import { LOGIN_RESPONSE } from './auth.docs.js';
import {
  LoginResultDto,
  MessageDto,
  MfaChallengeDto,
  RegisterDto,
  RegisterResultDto,
} from './dto/auth.dto.js';
import { ChangePasswordDto, EmailDto, ResetPasswordDto, EmailTokenDto } from './dto/email-flows.dto.js';
import { EMAIL_FLOW_DOCS as DOCS, EMAIL_FLOW_ERRORS as ERRORS } from './email-flows.docs.js';
import { EmailFlowsService } from './email-flows.service.js';

@ApiTags('Auth')
@Controller('auth')
export class EmailFlowsController {
  constructor(private readonly flows: EmailFlowsService) {}

  @Post('request-signup')
  @HttpCode(202)
  @Endpoint({
    summary: 'Sign up with e-mail verification',
    description: DOCS.requestSignup,
    access: 'public',
    success: { model: MessageDto, status: 202 },
    errors: [400, 429],
  })
  requestSignup(@Body() dto: RegisterDto): Promise<MessageDto> {
    return this.flows.requestSignup(dto);
  }

  @Post('complete-signup')
  @Endpoint({
    summary: 'Finish e-mail sign-up',
    description: DOCS.completeSignup,
    access: 'public',
    success: { model: RegisterResultDto, status: 201 },
    errors: [400, 409, 429],
    errorCodes: ERRORS.completeSignup,
  })
  completeSignup(@Body() dto: EmailTokenDto, @ReqMeta() meta: RequestMeta): Promise<RegisterResultDto> {
    return this.flows.completeSignup(dto.token, meta);
  }

  @Post('forgot-password')
  @HttpCode(200)
  @Endpoint({
    summary: 'Ask for a password-reset link',
    description: DOCS.forgotPassword,
    access: 'public',
    success: MessageDto,
    errors: [400, 403, 429],
    errorCodes: ERRORS.ssoRequired,
  })
  forgotPassword(@Body() dto: EmailDto): Promise<MessageDto> {
    return this.flows.forgotPassword(dto.email);
  }

  @Post('reset-password')
  @HttpCode(200)
  @Endpoint({
    summary: 'Set a new password with a reset token',
    description: DOCS.resetPassword,
    access: 'public',
    success: MessageDto,
    errors: [400, 403, 429],
    errorCodes: ERRORS.resetPassword,
  })
  resetPassword(@Body() dto: ResetPasswordDto, @ReqMeta() meta: RequestMeta): Promise<MessageDto> {
    return this.flows.resetPassword(dto, meta);
  }

  @Post('change-password')
  @HttpCode(200)
  @Endpoint({
    summary: 'Change the password',
    description: DOCS.changePassword,
    access: { accountWide: true },
    success: MessageDto,
    errors: [400, 401, 429],
    errorCodes: ERRORS.changePassword,
  })
  changePassword(
    @CurrentActor() actor: Actor,
    @Body() dto: ChangePasswordDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<MessageDto> {
    return this.flows.changePassword(actor, dto, meta);
  }

  @Post('magic-link')
  @HttpCode(200)
  @Endpoint({
    summary: 'Ask for a sign-in link',
    description: DOCS.magicLink,
    access: 'public',
    success: MessageDto,
    errors: [400, 403, 429],
    errorCodes: ERRORS.ssoRequired,
  })
  magicLink(@Body() dto: EmailDto): Promise<MessageDto> {
    return this.flows.requestMagicLink(dto.email);
  }

  @Post('magic-link/verify')
  @HttpCode(200)
  @Endpoint({
    summary: 'Sign in with a magic-link token',
    description: DOCS.verifyMagicLink,
    access: 'public',
    ...LOGIN_RESPONSE,
    errors: [400, 401, 403, 429],
    errorCodes: ERRORS.verifyMagicLink,
  })
  verifyMagicLink(
    @Body() dto: EmailTokenDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<LoginResultDto | MfaChallengeDto> {
    return this.flows.verifyMagicLink(dto.token, meta);
  }
}
