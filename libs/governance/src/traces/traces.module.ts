import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { PoliciesModule } from '../policies/policies.module.js';

/** Trace ingestion (POST /traces, OTLP), listing, similarity search. */
@Module({
  imports: [AuditModule, PoliciesModule],
})
export class TracesModule {}
