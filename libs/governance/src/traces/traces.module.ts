import { Module } from '@nestjs/common';
import { PoliciesModule } from '../policies/policies.module.js';
import { OtelController } from './otel.controller.js';
import { OtelIngestService } from './otel-ingest.service.js';
import { TracesController } from './traces.controller.js';
import { TracesRepository } from './traces.repository.js';
import { TracesService } from './traces.service.js';
import { TraceWriter } from './trace-writer.js';

/** Trace ingestion (POST /traces, OTLP), listing, similarity search. */
@Module({
  imports: [PoliciesModule],
  controllers: [TracesController, OtelController],
  providers: [TracesRepository, TraceWriter, TracesService, OtelIngestService],
  exports: [TracesService],
})
export class TracesModule {}
