import { Body, Controller, HttpCode, Post } from '@nestjs/common';
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
import {
  ApiLoginResponse,
  LoginResultDto,
  MessageDto,
  MfaChallengeDto,
  RegisterDto,
  RegisterResultDto,
} from './dto/auth.dto.js';
import { ChangePasswordDto, EmailDto, ResetPasswordDto, EmailTokenDto } from './dto/email-flows.dto.js';
import { EmailFlowsService } from './email-flows.service.js';
import { SSO_REQUIRED } from './auth.errors.js';

const INVALID_TOKEN = 'INVALID_TOKEN (unknown, used or expired token), VALIDATION_ERROR';


@ApiTags('Auth')
@Controller('auth')
export class EmailFlowsController {
  constructor(private readonly flows: EmailFlowsService) {}

  @Post('request-signup')
  @Public()
  @HttpCode(202)
  @ApiOperation({
    summary: 'Sign up with e-mail verification',
    description:
      'Always 202 with the same body. A new address receives a confirmation link (valid 24 hours); an address that already has an account receives a note instead. No JWT is returned.',
  })
  @ApiEnvelope(MessageDto, { status: 202 })
  @ApiErrors([400, 429])
  requestSignup(@Body() dto: RegisterDto): Promise<MessageDto> {
    return this.flows.requestSignup(dto);
  }

  @Post('complete-signup')
  @Public()
  @ApiOperation({
    summary: 'Finish e-mail sign-up',
    description: 'Exchanges the confirmation token for the first JWT. Writes `auth.register`.',
  })
  @ApiEnvelope(RegisterResultDto, { status: 201 })
  @ApiErrors([400, 409, 429], {
    400: INVALID_TOKEN,
    409: 'EMAIL_IN_USE (the address was registered meanwhile)',
  })
  completeSignup(@Body() dto: EmailTokenDto, @ReqMeta() meta: RequestMeta): Promise<RegisterResultDto> {
    return this.flows.completeSignup(dto.token, meta);
  }

  @Post('forgot-password')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Ask for a password-reset link',
    description:
      'Always 200 with the same body and timing. An existing account receives a link valid one hour, single use. ' +
      'An address whose domain an organization verified and enforces SSO for gets 403 `SSO_REQUIRED` with ' +
      '`details.ssoUrl` instead (decided by the domain alone, whether or not an account exists).',
  })
  @ApiEnvelope(MessageDto)
  @ApiErrors([400, 403, 429], { 403: SSO_REQUIRED })
  forgotPassword(@Body() dto: EmailDto): Promise<MessageDto> {
    return this.flows.forgotPassword(dto.email);
  }

  @Post('reset-password')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Set a new password with a reset token',
    description:
      'Revokes every session of the user. Writes `auth.password_reset`. 403 `SSO_REQUIRED` when the address’s ' +
      'organization has enforced SSO since the link was sent.',
  })
  @ApiEnvelope(MessageDto)
  @ApiErrors([400, 403, 429], { 400: INVALID_TOKEN, 403: SSO_REQUIRED })
  resetPassword(@Body() dto: ResetPasswordDto, @ReqMeta() meta: RequestMeta): Promise<MessageDto> {
    return this.flows.resetPassword(dto, meta);
  }

  @Post('change-password')
  @Access({ accountWide: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Change the password',
    description:
      'Needs the current password; revokes every other session of the user. Writes `auth.password_changed`.',
  })
  @ApiEnvelope(MessageDto)
  @ApiErrors([400, 401, 429], {
    400: 'VALIDATION_ERROR (weak new password; `details` names currentPassword when it is wrong)',
  })
  changePassword(
    @CurrentActor() actor: Actor,
    @Body() dto: ChangePasswordDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<MessageDto> {
    return this.flows.changePassword(actor, dto, meta);
  }

  @Post('magic-link')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Ask for a sign-in link',
    description:
      'Always 200 with the same body. The link is valid 15 minutes, single use. An address whose domain an ' +
      'organization verified and enforces SSO for gets 403 `SSO_REQUIRED` with `details.ssoUrl` instead (decided ' +
      'by the domain alone).',
  })
  @ApiEnvelope(MessageDto)
  @ApiErrors([400, 403, 429], { 403: SSO_REQUIRED })
  magicLink(@Body() dto: EmailDto): Promise<MessageDto> {
    return this.flows.requestMagicLink(dto.email);
  }

  @Post('magic-link/verify')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Sign in with a magic-link token',
    description:
      'Answers as login. Writes `auth.login` with `metadata.method = "magic_link"`. The session opens in the ' +
      'oldest membership whose organization does not enforce SSO for the address; 403 `SSO_REQUIRED` when none.',
  })
  @ApiLoginResponse()
  @ApiErrors([400, 401, 403, 429], {
    400: INVALID_TOKEN,
    401: 'ACCOUNT_DEACTIVATED, ORGANIZATION_DELETED (as login)',
    403: SSO_REQUIRED,
  })
  verifyMagicLink(
    @Body() dto: EmailTokenDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<LoginResultDto | MfaChallengeDto> {
    return this.flows.verifyMagicLink(dto.token, meta);
  }
}
