import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '../identity-core.module.js';

/** Workspace API keys (svc_live_) and stream tokens. */
@Module({
  imports: [IdentityCoreModule],
})
export class ApiKeysModule {}
