import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';

/** TOTP multi-factor authentication: setup, enable, disable, the MFA step of login, backup codes. */
@Module({
  imports: [IdentityCoreModule],
})
export class MfaModule {}
