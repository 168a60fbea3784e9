import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { ReviewModule } from '../review/review.module.js';
import { TracesModule } from '../traces/traces.module.js';
import { CpiController } from './cpi.controller.js';
import { CpiIngestService } from './cpi-ingest.service.js';
import { CpiReadsRepository } from './cpi-reads.repository.js';
import { CpiReadsService } from './cpi-reads.service.js';
import { TraceFeedbackRepository } from './trace-feedback.repository.js';

/** Human feedback on traces (POST /cpi/ingest) and the CPI reads (GET /cpi, GET /cpi/analytics). */
@Module({
  imports: [TracesModule, AgentsModule, ReviewModule],
  controllers: [CpiController],
  providers: [CpiIngestService, TraceFeedbackRepository, CpiReadsService, CpiReadsRepository],
  exports: [TraceFeedbackRepository],
})
export class CpiModule {}
