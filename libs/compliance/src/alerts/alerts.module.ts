import { Module } from '@nestjs/common';
import { IntegrationsModule, ReviewModule, TracesModule } from '#governance';
import { IncidentsModule } from '../incidents/incidents.module.js';
import { AlertEvaluatorJob } from './alert-evaluator.job.js';
import { AlertMetrics } from './alert-metrics.js';
import { AlertsController } from './alerts.controller.js';
import { AlertsRepository } from './alerts.repository.js';
import { AlertsService } from './alerts.service.js';

/** Alert rules: CRUD, their evaluation by the scheduler, notifications through integrations, and their history. */
@Module({
  imports: [TracesModule, ReviewModule, IncidentsModule, IntegrationsModule],
  controllers: [AlertsController],
  providers: [AlertsRepository, AlertsService, AlertMetrics, AlertEvaluatorJob],
  exports: [AlertsRepository],
})
export class AlertsModule {}
