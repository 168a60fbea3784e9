import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '#identity';
import { CpiModule } from '../cpi/cpi.module.js';
import { ReviewModule } from '../review/review.module.js';
import { SubjectsModule } from '../subjects/subjects.module.js';
import { TracesModule } from '../traces/traces.module.js';
import { TracePurgeController } from './trace-purge.controller.js';
import { TracePurgeService } from './trace-purge.service.js';
import { TraceRetentionJob } from './trace-retention.job.js';

/** Deleting traces: POST /traces/purge, and the daily purge past an organization's retention. */
@Module({
  imports: [TracesModule, ReviewModule, CpiModule, SubjectsModule, IdentityCoreModule],
  controllers: [TracePurgeController],
  providers: [TracePurgeService, TraceRetentionJob],
})
export class RetentionModule {}
