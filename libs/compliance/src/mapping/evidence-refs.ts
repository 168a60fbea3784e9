import { Injectable } from '@nestjs/common';
import { AuditService, PoliciesRepository } from '#governance';
import { AppError, type ErrorDetail } from '#platform';
import { FriaRepository } from '../fria/fria.repository.js';
import { IncidentsRepository } from '../incidents/incidents.repository.js';
import type { EvidenceRef } from './compliance-mapping.schema.js';

/**
 * Checks that every evidence reference names a record of the organization. A record of another organization is
 * refused exactly like a missing one.
 */
@Injectable()
export class EvidenceRefs {
  constructor(
    private readonly frias: FriaRepository,
    private readonly policies: PoliciesRepository,
    private readonly audit: AuditService,
    private readonly incidents: IncidentsRepository,
  ) {}

  async assertExist(organizationId: string, refs: readonly EvidenceRef[]): Promise<void> {
    const details: ErrorDetail[] = [];
    for (const [i, ref] of refs.entries()) {
      if (!(await this.exists(organizationId, ref))) {
        details.push({ field: `evidenceRefs[${i}]`, message: `${ref.type} ${ref.id} not found` });
      }
    }
    if (details.length > 0) throw AppError.validation('Evidence references not found', details);
  }

  private async exists(organizationId: string, ref: EvidenceRef): Promise<boolean> {
    switch (ref.type) {
      case 'fria':
        return this.frias.exists(organizationId, ref.id);
      case 'policy':
        return (await this.policies.find(organizationId, ref.id)) !== undefined;
      case 'audit':
        return (await this.audit.findEntry(organizationId, ref.id)) !== undefined;
      case 'incident':
        return (await this.incidents.find(organizationId, ref.id)) !== undefined;
    }
  }
}
