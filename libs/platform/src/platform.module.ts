import { Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { ConfigModule } from './config/config.module.js';
import { AuditLog } from './audit/audit-log.js';
import { AuditLogRepository } from './audit/audit-log.repository.js';
import { Clock } from './clock/clock.js';
import { SecretBox } from './crypto/secret-box.js';
import { MailService } from './mail/mail.service.js';
import { Outbox } from './outbox/outbox.js';
import { DomainEvents } from './events/domain-events.js';
import { DomainEventsRepository } from './events/domain-events.repository.js';
import { JobScheduler } from './scheduler/job-scheduler.js';
import { ScheduledJobsRepository } from './scheduler/scheduled-jobs.repository.js';
import { RateLimitService } from './security/rate-limit.js';
import { DatabaseModule } from './db/database.module.js';
import { EnvelopeInterceptor } from './http/envelope.js';
import { GlobalExceptionFilter } from './http/exception.filter.js';
import { createValidationPipe } from './http/validation.js';
import { SCHEMA_VERSIONS, VERSION_REGISTRY, VersioningService } from './http/versioning.js';
import { AppLogger } from './logging/app-logger.js';
import { ApiKeyResolverRegistry } from './security/credential-resolvers.js';
import { SystemController } from './system/system.controller.js';
import { EventLoopMonitor } from './system/event-loop.monitor.js';
import { Readiness } from './system/readiness.js';
import { Metrics } from './metrics/metrics.js';
import { MetricsListener } from './metrics/metrics-listener.js';
import { RuntimeMetrics } from './metrics/runtime-metrics.js';
import { SignInMetrics } from './metrics/sign-in-metrics.js';
import { TracingFlush } from './tracing/tracing-flush.js';

/**
 * Cross-cutting infrastructure: configuration, database, clock, logging, HTTP conventions, the job scheduler, the
 * outbox and mail on it, and the audit log's write side (AuditLog). The access guard is registered by the application module, which also imports the identity module
 * that resolves bearers.
 */
@Global()
@Module({
  imports: [ConfigModule, DatabaseModule],
  controllers: [SystemController],
  providers: [
    AppLogger,
    Metrics,
    MetricsListener,
    RuntimeMetrics,
    SignInMetrics,
    TracingFlush,
    Clock,
    SecretBox,
    JobScheduler,
    ScheduledJobsRepository,
    Outbox,
    DomainEvents,
    DomainEventsRepository,
    MailService,
    RateLimitService,
    EventLoopMonitor,
    Readiness,
    { provide: VERSION_REGISTRY, useValue: SCHEMA_VERSIONS },
    VersioningService,
    ApiKeyResolverRegistry,
    AuditLog,
    AuditLogRepository,
    { provide: APP_PIPE, useFactory: createValidationPipe },
    { provide: APP_FILTER, useClass: GlobalExceptionFilter },
    { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
  ],
  exports: [
    AppLogger,
    Metrics,
    MetricsListener,
    SignInMetrics,
    ConfigModule,
    DatabaseModule,
    Clock,
    SecretBox,
    JobScheduler,
    Outbox,
    DomainEvents,
    MailService,
    RateLimitService,
    VersioningService,
    ApiKeyResolverRegistry,
    AuditLog,
    Readiness,
  ],
})
export class PlatformModule {}
