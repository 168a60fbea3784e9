import { Module } from '@nestjs/common';
import { ReviewItemsRepository } from './review-items.repository.js';

/** The human review queue: its items are created by trace ingestion (the queue's API comes with the review issue). */
@Module({
  providers: [ReviewItemsRepository],
  exports: [ReviewItemsRepository],
})
export class ReviewModule {}
