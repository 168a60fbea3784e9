import { Module } from '@nestjs/common';
import { ActivePatterns } from './active-patterns.js';
import { ApprovalPatternsController } from './approval-patterns.controller.js';
import { ApprovalPatternsRepository } from './approval-patterns.repository.js';
import { ApprovalPatternsService } from './approval-patterns.service.js';

/** Approval patterns: counted by review decisions, signed off by owners and admins, applied at ingestion. */
@Module({
  controllers: [ApprovalPatternsController],
  providers: [ApprovalPatternsRepository, ActivePatterns, ApprovalPatternsService],
  exports: [ActivePatterns, ApprovalPatternsService],
})
export class ApprovalPatternsModule {}
