import { Module } from '@nestjs/common';
import { AuditModule, PoliciesModule } from '#governance';
import { IdentityCoreModule } from '#identity';
import { FriaModule } from '../fria/fria.module.js';
import { IncidentsModule } from '../incidents/incidents.module.js';
import { ComplianceMappingController } from './compliance-mapping.controller.js';
import { ComplianceMappingRepository } from './compliance-mapping.repository.js';
import { ComplianceMappingService } from './compliance-mapping.service.js';
import { EvidenceRefs } from './evidence-refs.js';
import { LegacyNotesController } from './legacy-notes.controller.js';
import { LegacyNotesService } from './legacy-notes.service.js';

/** Clause attestations against ISO/IEC 42001, the EU AI Act and the NIST AI RMF, with their catalogues. */
@Module({
  imports: [FriaModule, IncidentsModule, PoliciesModule, AuditModule, IdentityCoreModule],
  controllers: [ComplianceMappingController, LegacyNotesController],
  providers: [ComplianceMappingRepository, EvidenceRefs, ComplianceMappingService, LegacyNotesService],
  exports: [ComplianceMappingService],
})
export class ComplianceMappingModule {}
