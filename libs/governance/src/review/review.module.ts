import { Module } from '@nestjs/common';
import { VerdictRollups } from '../cpi/verdict-rollups.js';
import { VerdictRollupsRepository } from '../cpi/verdict-rollups.repository.js';
import { ReviewItemsRepository } from './review-items.repository.js';

/**
 * The human review queue: its items are created by trace ingestion (the queue's API comes with the review issue).
 * The verdict rollups of the CPI are provided here too: review decisions, feedback and the purge all change
 * verdicts, and the modules making them all import this one.
 */
@Module({
  providers: [ReviewItemsRepository, VerdictRollups, VerdictRollupsRepository],
  exports: [ReviewItemsRepository, VerdictRollups],
})
export class ReviewModule {}
