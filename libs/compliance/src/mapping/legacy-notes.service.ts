import { Inject, Injectable } from '@nestjs/common';
import { OrganizationsService } from '#identity';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  AppError,
  AuditLog,
  Clock,
  type ErrorDetail,
  type RequestMeta,
  COMPLIANCE_NOTES_GUIDE_PATH,
  TransactionHost,
} from '#platform';
import { CATALOGUES, hasClause } from './catalogues/index.js';
import { ComplianceMappingRepository } from './compliance-mapping.repository.js';
import type { Framework } from './compliance-mapping.schema.js';
import { DEFAULT_FRAMEWORK } from './compliance-mapping.service.js';
import type { LegacyNotesDto, ReplaceLegacyNotesDto } from './dto/legacy-notes.dto.js';
import { EVIDENCE_MAX } from './dto/mapping.dto.js';
import { legacyNotesSunset } from './legacy-sunset.js';

/**
 * The deprecated free-text notes (organizations.complianceNotes, owned by identity): read merged over the structured
 * notes, written on their own. Every answer carries the deprecation headers.
 */
@Injectable()
export class LegacyNotesService {
  constructor(
    private readonly mapping: ComplianceMappingRepository,
    private readonly organizations: OrganizationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /** Deprecation, Sunset (at least 90 days ahead) and the Link to the migration note. */
  headers(): Record<string, string> {
    return {
      Deprecation: 'true',
      Sunset: legacyNotesSunset(this.clock.now()).toUTCString(),
      Link: `<${this.config.publicUrl}${COMPLIANCE_NOTES_GUIDE_PATH}>; rel="deprecation"`,
    };
  }

  async read(actor: Actor, framework: Framework = DEFAULT_FRAMEWORK): Promise<LegacyNotesDto> {
    const rows = await this.mapping.list(actor.organizationId, framework);
    const legacy = await this.organizations.legacyComplianceNotes(actor.organizationId, framework);
    const evidence = new Map(rows.map((r) => [r.clauseId, r.evidence]));
    const notes: Record<string, string> = {};
    // Catalogue order, so the map reads like the catalogue whatever the storage order.
    for (const { clauseId } of CATALOGUES[framework]) {
      const text = legacy[clauseId] ?? evidence.get(clauseId);
      if (text !== undefined && text !== null) notes[clauseId] = text;
    }
    return { notes };
  }

  async replace(actor: Actor, dto: ReplaceLegacyNotesDto, meta: RequestMeta): Promise<LegacyNotesDto> {
    const framework = dto.framework ?? DEFAULT_FRAMEWORK;
    const notes = this.validNotes(framework, dto.notes);
    await this.tx.run(async () => {
      await this.organizations.replaceLegacyComplianceNotes(actor.organizationId, framework, notes);
      await this.audit.record(
        actor,
        'compliance.mapping_notes.updated',
        { type: 'organization', id: actor.organizationId },
        { framework, clauseIds: Object.keys(notes) },
        meta,
      );
    });
    return this.read(actor, framework);
  }

  /** Keys must be clause ids of the framework and values strings of at most 4,000 characters. */
  private validNotes(framework: Framework, input: Record<string, unknown>): Record<string, string> {
    const details: ErrorDetail[] = [];
    const notes: Record<string, string> = {};
    for (const [key, value] of Object.entries(input)) {
      const field = `notes.${key.slice(0, 40)}`;
      if (!hasClause(framework, key)) {
        details.push({ field, message: `not a clause of ${framework}` });
      } else if (typeof value !== 'string') {
        details.push({ field, message: 'must be a string' });
      } else if (value.length > EVIDENCE_MAX) {
        details.push({ field, message: `must be at most ${EVIDENCE_MAX} characters` });
      } else {
        notes[key] = value;
      }
      // A body of thousands of bad keys is refused after the first few, with the answer kept small.
      if (details.length >= 20) break;
    }
    if (details.length > 0) throw AppError.validation('Invalid legacy notes', details);
    return notes;
  }
}
