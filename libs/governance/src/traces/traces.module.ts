import { Module, type OnModuleInit } from '@nestjs/common';
import { DomainEvents } from '#platform';
import { ApiKeysModule, IdentityCoreModule } from '#identity';
import { AgentTraceStatsPort } from '../agents/agent-trace-stats.js';
import { AgentsModule } from '../agents/agents.module.js';
import { ApprovalPatternsModule } from '../approval-patterns/approval-patterns.module.js';
import { PoliciesModule } from '../policies/policies.module.js';
import { ReviewModule } from '../review/review.module.js';
import { SubjectKeys } from '../subjects/subject-key.js';
import { OtelController } from './otel.controller.js';
import { PiiMasking } from './pii-masking.js';
import { OtelIngestService } from './otel-ingest.service.js';
import { TracesController } from './traces.controller.js';
import { TracesRepository } from './traces.repository.js';
import { TraceContentRepository } from './trace-content.repository.js';
import { TraceRollups } from './trace-rollups.js';
import { TraceRollupsRepository } from './trace-rollups.repository.js';
import { TracesService } from './traces.service.js';
import { TraceIngestPipeline } from './trace-ingest.pipeline.js';
import { TraceWriter } from './trace-writer.js';
import { TRACE_AUDIT_EVENTS, traceEventOf } from './trace-events.js';

/** Trace ingestion (POST /traces, OTLP), listing, similarity search. */
@Module({
  imports: [
    PoliciesModule,
    AgentsModule,
    ApiKeysModule,
    IdentityCoreModule,
    ReviewModule,
    ApprovalPatternsModule,
  ],
  controllers: [TracesController, OtelController],
  providers: [
    TracesRepository,
    TraceContentRepository,
    TraceRollups,
    TraceRollupsRepository,
    TraceWriter,
    TraceIngestPipeline,
    TracesService,
    OtelIngestService,
    SubjectKeys,
    PiiMasking,
  ],
  exports: [TracesService, TracesRepository, TraceContentRepository, TraceRollups, SubjectKeys, PiiMasking],
})
export class TracesModule implements OnModuleInit {
  constructor(
    private readonly stats: AgentTraceStatsPort,
    private readonly traces: TracesRepository,
    private readonly events: DomainEvents,
  ) {}

  /**
   * The agents module shows each agent's trace counts; it cannot import this module, so it is given them. A trace's
   * audit entry is also its domain event (webhooks, the event stream).
   */
  onModuleInit(): void {
    this.stats.provide((organizationId, agentId) => this.traces.agentStats(organizationId, agentId));
    this.events.announcesAudit(TRACE_AUDIT_EVENTS, traceEventOf);
  }
}
