import { Module } from '@nestjs/common';
import { SubjectsModule, TracesModule } from '#governance';
import { IdentityCoreModule } from '#identity';
import { ExplanationsModule } from '../explanations/explanations.module.js';
import { ReportsModule } from '../reports/reports.module.js';
import { SubjectReportsController } from './subject-reports.controller.js';
import { SubjectReportsService } from './subject-reports.service.js';

/**
 * The person's report (GDPR art. 15; docs/data-protection.md, "The person's report (article 15)"): the subjects
 * module's decisions about a reference, each explained by the explanations module, printed by the reports' renderer.
 * Here rather than beside the subjects because compliance may import governance, not the other way round.
 */
@Module({
  imports: [SubjectsModule, TracesModule, ExplanationsModule, ReportsModule, IdentityCoreModule],
  controllers: [SubjectReportsController],
  providers: [SubjectReportsService],
})
export class SubjectReportsModule {}
