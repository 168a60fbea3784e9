import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type Actor, ApiErrors, CurrentActor, Endpoint, ReqMeta, type RequestMeta } from '#platform';
import { LoginResultDto, MessageDto } from '../auth/dto/auth.dto.js';
import {
  BackupCodesDto,
  MfaCodeDto,
  MfaCodeOrBackupCodeDto,
  MfaLoginDto,
  MfaResendDto,
  MfaSetupDto,
  SecuritySettingsDto,
} from './dto/mfa.dto.js';
import { MFA_DOCS as DOCS, MFA_ERRORS as ERRORS } from './mfa.docs.js';
import { MfaService } from './mfa.service.js';

@ApiTags('Auth')
@Controller('auth')
@ApiErrors([429])
export class MfaController {
  constructor(private readonly mfa: MfaService) {}

  @Post('mfa/setup')
  @HttpCode(200)
  @Endpoint({
    summary: 'Start MFA setup',
    description: DOCS.setup,
    access: { accountWide: true },
    success: MfaSetupDto,
    errors: [401, 409],
    errorCodes: ERRORS.setup,
  })
  setup(@CurrentActor() actor: Actor): Promise<MfaSetupDto> {
    return this.mfa.setup(actor);
  }

  @Post('mfa/enable')
  @HttpCode(200)
  @Endpoint({
    summary: 'Enable MFA',
    description: DOCS.enable,
    access: { accountWide: true },
    success: BackupCodesDto,
    errors: [400, 401, 409],
    errorCodes: ERRORS.enable,
  })
  enable(
    @CurrentActor() actor: Actor,
    @Body() dto: MfaCodeDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<BackupCodesDto> {
    return this.mfa.enable(actor, dto, meta);
  }

  @Post('mfa/disable')
  @HttpCode(200)
  @Endpoint({
    summary: 'Disable MFA',
    description: DOCS.disable,
    access: { accountWide: true },
    success: MessageDto,
    errors: [400, 401, 409],
    errorCodes: ERRORS.disable,
  })
  disable(
    @CurrentActor() actor: Actor,
    @Body() dto: MfaCodeOrBackupCodeDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<MessageDto> {
    return this.mfa.disable(actor, dto, meta);
  }

  @Post('mfa/login')
  @HttpCode(200)
  @Endpoint({
    summary: 'Finish a login with the second factor',
    description: DOCS.login,
    access: 'public',
    success: LoginResultDto,
    errors: [400, 401, 403, 429],
    errorCodes: ERRORS.login,
  })
  login(@Body() dto: MfaLoginDto, @ReqMeta() meta: RequestMeta): Promise<LoginResultDto> {
    return this.mfa.login(dto, meta);
  }

  @Post('backup-codes/generate')
  @HttpCode(200)
  @Endpoint({
    summary: 'Replace the backup codes',
    description: DOCS.generateBackupCodes,
    access: { accountWide: true },
    success: BackupCodesDto,
    errors: [400, 401, 409],
    errorCodes: ERRORS.generateBackupCodes,
  })
  generateBackupCodes(
    @CurrentActor() actor: Actor,
    @Body() dto: MfaCodeDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<BackupCodesDto> {
    return this.mfa.regenerateBackupCodes(actor, dto, meta);
  }

  @Post('mfa/resend')
  @HttpCode(200)
  @Endpoint({
    summary: 'Resend an MFA code (informational)',
    description: DOCS.resend,
    access: 'public',
    success: MfaResendDto,
  })
  resend(): MfaResendDto {
    return this.mfa.resend();
  }

  @Get('security-settings')
  @Endpoint({
    summary: 'The caller’s security settings',
    description: DOCS.securitySettings,
    access: {},
    success: SecuritySettingsDto,
    errors: [401],
  })
  securitySettings(@CurrentActor() actor: Actor): Promise<SecuritySettingsDto> {
    return this.mfa.securitySettings(actor);
  }
}
