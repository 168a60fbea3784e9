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
import { LoginResultDto, MessageDto } from '../auth/dto/auth.dto.js';
import { SSO_REQUIRED } from '../auth/auth.errors.js';
import {
  BackupCodesDto,
  MfaCodeDto,
  MfaCodeOrBackupCodeDto,
  MfaLoginDto,
  MfaResendDto,
  MfaSetupDto,
  SecuritySettingsDto,
} from './dto/mfa.dto.js';
import { MfaService } from './mfa.service.js';

const INVALID_CODE =
  'INVALID_MFA_CODE (wrong code, a code already used in its 30-second step, or a used backup code)';
const WRONG_STATE_ON = 'CONFLICT (MFA is already enabled)';
const WRONG_STATE_OFF = 'CONFLICT (MFA is not enabled)';
const JWT_401 = 'UNAUTHORIZED, SESSION_REVOKED, TOKEN_EXPIRED, ACCOUNT_DEACTIVATED';

@ApiTags('Auth')
@Controller('auth')
@ApiErrors([429])
export class MfaController {
  constructor(private readonly mfa: MfaService) {}

  @Post('mfa/setup')
  @Access({ accountWide: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start MFA setup',
    description:
      'Generates a TOTP secret (SHA-1, 6 digits, 30 s) and its QR code. The secret is stored encrypted and is ' +
      'not active until `/auth/mfa/enable` proves a code; calling setup again replaces a pending secret.',
  })
  @ApiEnvelope(MfaSetupDto)
  @ApiErrors([401, 409], { 409: WRONG_STATE_ON })
  setup(@CurrentActor() actor: Actor): Promise<MfaSetupDto> {
    return this.mfa.setup(actor);
  }

  @Post('mfa/enable')
  @Access({ accountWide: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Enable MFA',
    description:
      'Verifies a code from the pending secret, turns MFA on and returns ten single-use backup codes, shown ' +
      'only here. Writes `auth.mfa_enabled`.',
  })
  @ApiEnvelope(BackupCodesDto)
  @ApiErrors([400, 401, 409], {
    401: `${INVALID_CODE}; ${JWT_401}`,
    409: `${WRONG_STATE_ON}, or no pending secret (call /auth/mfa/setup first)`,
  })
  enable(
    @CurrentActor() actor: Actor,
    @Body() dto: MfaCodeDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<BackupCodesDto> {
    return this.mfa.enable(actor, dto, meta);
  }

  @Post('mfa/disable')
  @Access({ accountWide: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Disable MFA',
    description:
      'Needs a TOTP code or an unused backup code. Deletes the secret and every backup code. Writes ' +
      '`auth.mfa_disabled` with `metadata.factor`.',
  })
  @ApiEnvelope(MessageDto)
  @ApiErrors([400, 401, 409], { 401: `${INVALID_CODE}; ${JWT_401}`, 409: WRONG_STATE_OFF })
  disable(
    @CurrentActor() actor: Actor,
    @Body() dto: MfaCodeOrBackupCodeDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<MessageDto> {
    return this.mfa.disable(actor, dto, meta);
  }

  @Post('mfa/login')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Finish a login with the second factor',
    description:
      'Exchanges the `tempToken` from `/auth/login` (or the SSO hand-off) and a TOTP or unused backup code for a ' +
      'session. Writes `auth.login` with the first factor’s `metadata.method`, `metadata.mfa = true` and ' +
      '`metadata.mfaFactor` (`totp` or `backup_code`); a wrong code writes `auth.login_failed` with ' +
      '`metadata.reason = "invalid_mfa_code"`. The tempToken stays usable for its 5 minutes, always with a fresh code. ' +
      'After 10 wrong codes for one user within 15 minutes, from any address, further attempts get 429 ' +
      '`RATE_LIMIT_EXCEEDED` with `Retry-After`. The break-glass step of an owner of an organization that enforces ' +
      'SSO also writes `auth.sso_break_glass` (and `metadata.breakGlass = true` on `auth.login`) and mails every ' +
      'other owner; a tempToken of any other first factor into such an organization answers 403 `SSO_REQUIRED`.',
  })
  @ApiEnvelope(LoginResultDto)
  @ApiErrors([400, 401, 403, 429], {
    403: SSO_REQUIRED,
    429: 'RATE_LIMIT_EXCEEDED (the auth limiter per IP, or 10 wrong MFA codes for this user in 15 minutes)',
    401:
      `${INVALID_CODE}; UNAUTHORIZED (tempToken malformed, expired, issued before the last password change, ` +
      'or MFA was disabled since); ACCOUNT_DEACTIVATED (no active membership)',
  })
  login(@Body() dto: MfaLoginDto, @ReqMeta() meta: RequestMeta): Promise<LoginResultDto> {
    return this.mfa.login(dto, meta);
  }

  @Post('backup-codes/generate')
  @Access({ accountWide: true })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Replace the backup codes',
    description:
      'Needs a TOTP code (not a backup code). Returns ten new codes; every earlier code, used or not, stops ' +
      'working. Writes `auth.backup_codes_generated`.',
  })
  @ApiEnvelope(BackupCodesDto)
  @ApiErrors([400, 401, 409], { 401: `${INVALID_CODE}; ${JWT_401}`, 409: WRONG_STATE_OFF })
  generateBackupCodes(
    @CurrentActor() actor: Actor,
    @Body() dto: MfaCodeDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<BackupCodesDto> {
    return this.mfa.regenerateBackupCodes(actor, dto, meta);
  }

  @Post('mfa/resend')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Resend an MFA code (informational)',
    description:
      'Placeholder: TOTP codes come from the authenticator app and are never sent; returns a message.',
  })
  @ApiEnvelope(MfaResendDto)
  resend(): MfaResendDto {
    return this.mfa.resend();
  }

  @Get('security-settings')
  @Access()
  @ApiOperation({
    summary: 'The caller’s security settings',
    description:
      'MFA state, unused backup codes, password age. Trusted devices are not implemented (always empty).',
  })
  @ApiEnvelope(SecuritySettingsDto)
  @ApiErrors([401])
  securitySettings(@CurrentActor() actor: Actor): Promise<SecuritySettingsDto> {
    return this.mfa.securitySettings(actor);
  }
}
