import { Module } from '@nestjs/common';
import { TracesModule } from '#governance';
import { IdentityCoreModule } from '#identity';
import { IncidentNoticesJob } from './incident-notices.job.js';
import { IncidentsController } from './incidents.controller.js';
import { IncidentsRepository } from './incidents.repository.js';
import { IncidentsService } from './incidents.service.js';

/**
 * Serious incidents (EU AI Act article 73): the record, its reporting deadline and its clock, and the deadline
 * notices to the organization's owners and admins.
 */
@Module({
  imports: [TracesModule, IdentityCoreModule],
  controllers: [IncidentsController],
  providers: [IncidentsRepository, IncidentsService, IncidentNoticesJob],
  exports: [IncidentsRepository],
})
export class IncidentsModule {}
