import { Module } from '@nestjs/common';
import { AgentsModule, AuditModule, PoliciesModule, ReviewModule, TracesModule } from '#governance';
import { IdentityCoreModule } from '#identity';
import { AlertsModule } from '../alerts/alerts.module.js';
import { FriaModule } from '../fria/fria.module.js';
import { IncidentsModule } from '../incidents/incidents.module.js';
import { ComplianceMappingModule } from '../mapping/compliance-mapping.module.js';
import { ComplianceReportService } from './compliance-report.service.js';
import { PdfRenderer } from './pdf-renderer.js';
import { ReportFigures } from './report-figures.js';
import { ReportSchedulerJob } from './report-scheduler.job.js';
import { ReportSender } from './report-sender.js';
import { ReportsController } from './reports.controller.js';
import { ScheduledReportsController } from './scheduled-reports.controller.js';
import { ScheduledReportsRepository } from './scheduled-reports.repository.js';
import { ScheduledReportsService } from './scheduled-reports.service.js';

/** Reports (docs/compliance-officers.md, "Reports"): the compliance PDF, and the scheduled digests. */
@Module({
  imports: [
    TracesModule,
    AgentsModule,
    PoliciesModule,
    ReviewModule,
    AuditModule,
    IdentityCoreModule,
    FriaModule,
    IncidentsModule,
    ComplianceMappingModule,
    AlertsModule,
  ],
  controllers: [ReportsController, ScheduledReportsController],
  providers: [
    ReportFigures,
    PdfRenderer,
    ComplianceReportService,
    ScheduledReportsRepository,
    ScheduledReportsService,
    ReportSender,
    ReportSchedulerJob,
  ],
  // One Chromium per process: the explanations' PDF prints through the same renderer.
  exports: [PdfRenderer],
})
export class ReportsModule {}
