import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';
import { MfaBackupCodesRepository } from './mfa-backup-codes.repository.js';
import { MfaController } from './mfa.controller.js';
import { MfaService } from './mfa.service.js';

/** TOTP multi-factor authentication: setup, enable, disable, the MFA step of login, backup codes. */
@Module({
  imports: [IdentityCoreModule],
  controllers: [MfaController],
  providers: [MfaService, MfaBackupCodesRepository],
})
export class MfaModule {}
