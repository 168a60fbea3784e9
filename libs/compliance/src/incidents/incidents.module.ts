import { Module } from '@nestjs/common';
import { TracesModule } from '#governance';
import { IncidentsController } from './incidents.controller.js';
import { IncidentsRepository } from './incidents.repository.js';
import { IncidentsService } from './incidents.service.js';

/** Serious incidents (EU AI Act article 73): the record, its reporting deadline and its clock. */
@Module({
  imports: [TracesModule],
  controllers: [IncidentsController],
  providers: [IncidentsRepository, IncidentsService],
  exports: [IncidentsRepository],
})
export class IncidentsModule {}
