import { Module } from '@nestjs/common';
import {
  AgentsModule,
  AuditModule,
  CpiModule,
  PoliciesModule,
  ReviewModule,
  TracesModule,
} from '#governance';
import { IdentityCoreModule } from '#identity';
import { ReportsModule } from '../reports/reports.module.js';
import { TraceExplanationsController } from './trace-explanations.controller.js';
import { TraceExplanationsService } from './trace-explanations.service.js';

/**
 * The explanation of one decision (EU AI Act art. 86; docs/compliance-officers.md, "Explaining a decision (art.
 * 86)"): read from the governance modules' records; its PDF printed by the reports' Chromium renderer.
 */
@Module({
  imports: [
    TracesModule,
    AgentsModule,
    PoliciesModule,
    ReviewModule,
    CpiModule,
    AuditModule,
    IdentityCoreModule,
    ReportsModule,
  ],
  controllers: [TraceExplanationsController],
  providers: [TraceExplanationsService],
  // The subject's report (subject-reports/) explains each of its decisions with the same facts.
  exports: [TraceExplanationsService],
})
export class ExplanationsModule {}
