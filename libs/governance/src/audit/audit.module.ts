import { Module } from '@nestjs/common';
import { TracesModule } from '../traces/traces.module.js';
import { AuditChainReader } from './audit-chain-reader.js';
import { AuditContentCheck } from './audit-content-check.js';
import { AuditCheckpointsService } from './audit-checkpoints.service.js';
import { AuditController, AuditPublicKeyController } from './audit.controller.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';
import { AuditSigner } from './audit-signer.js';

@Module({
  // The traces' content, for the content check of GET /audit/verify?content=true.
  imports: [TracesModule],
  // The public key's route first: `GET /audit/:id` must not take `public-key`.
  controllers: [AuditPublicKeyController, AuditController],
  providers: [
    AuditRepository,
    AuditChainReader,
    AuditContentCheck,
    AuditService,
    AuditSigner,
    AuditCheckpointsService,
  ],
  exports: [AuditService, AuditCheckpointsService],
})
export class AuditModule {}
