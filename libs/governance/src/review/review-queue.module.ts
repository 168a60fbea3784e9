import { Module } from '@nestjs/common';
import { IdentityCoreModule } from '#identity';
import { ApprovalPatternsModule } from '../approval-patterns/approval-patterns.module.js';
import { TracesModule } from '../traces/traces.module.js';
import { ReviewQueueController } from './review-queue.controller.js';
import { ReviewQueueService } from './review-queue.service.js';
import { ReviewModule } from './review.module.js';

/**
 * The review queue's API. Apart from the review module (the items' table), which trace ingestion writes to, so
 * that deciding an item may change its trace without a cycle: review ← traces ← review queue.
 */
@Module({
  imports: [ReviewModule, TracesModule, ApprovalPatternsModule, IdentityCoreModule],
  controllers: [ReviewQueueController],
  providers: [ReviewQueueService],
})
export class ReviewQueueModule {}
