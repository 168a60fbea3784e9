import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessGuard, PlatformModule } from '#platform';
import { IdentityModule } from '#identity';
import {
  AgentsModule,
  ApprovalPatternsModule,
  AuditModule,
  CpiModule,
  RetentionModule,
  SubjectsModule,
  IntegrationsModule,
  EventStreamModule,
  PoliciesModule,
  ReviewQueueModule,
  TracesModule,
  WebhooksModule,
} from '#governance';
import {
  AlertsModule,
  ComplianceMappingModule,
  ExplanationsModule,
  FriaModule,
  IncidentsModule,
  ReportsModule,
  SubjectReportsModule,
} from '#compliance';

/** The HTTP service: every module, behind the global access guard (deny by default). */
@Module({
  imports: [
    PlatformModule,
    IdentityModule,
    AuditModule,
    AgentsModule,
    PoliciesModule,
    TracesModule,
    ReviewQueueModule,
    ApprovalPatternsModule,
    WebhooksModule,
    EventStreamModule,
    CpiModule,
    RetentionModule,
    SubjectsModule,
    IntegrationsModule,
    FriaModule,
    ComplianceMappingModule,
    IncidentsModule,
    ReportsModule,
    AlertsModule,
    ExplanationsModule,
    SubjectReportsModule,
  ],
  providers: [{ provide: APP_GUARD, useClass: AccessGuard }],
})
export class AppModule {}
