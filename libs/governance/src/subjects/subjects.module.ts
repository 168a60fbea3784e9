import { Module } from '@nestjs/common';
import { CpiModule } from '../cpi/cpi.module.js';
import { ReviewModule } from '../review/review.module.js';
import { TracesModule } from '../traces/traces.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { SubjectErasureWorker } from './subject-erasure.worker.js';
import { SubjectsController } from './subjects.controller.js';
import { SubjectsRepository } from './subjects.repository.js';
import { SubjectsService } from './subjects.service.js';

/**
 * The people decisions are about: their decisions, the erasure of their content and legal holds
 * (docs/data-protection.md). The subject key lives with the traces module, which hashes `subjectRef` at ingestion.
 */
@Module({
  imports: [TracesModule, ReviewModule, CpiModule, WebhooksModule],
  controllers: [SubjectsController],
  providers: [SubjectsRepository, SubjectsService, SubjectErasureWorker],
  exports: [SubjectsRepository, SubjectsService],
})
export class SubjectsModule {}
