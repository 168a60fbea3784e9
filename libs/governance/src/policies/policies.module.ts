import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { PolicySet, UncachedPolicySet } from './policy-set.js';

/** Policies: the condition engine, CRUD, templates, and the compiled set that ingestion evaluates. */
@Module({
  imports: [AuditModule],
  providers: [{ provide: PolicySet, useClass: UncachedPolicySet }],
  exports: [PolicySet],
})
export class PoliciesModule {}
