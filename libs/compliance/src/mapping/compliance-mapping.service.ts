import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  DomainEvents,
  type RequestMeta,
  TransactionHost,
} from '#platform';
import { CROSSWALK } from './catalogues/crosswalk.js';
import { CATALOGUES, FRAMEWORKS, hasClause } from './catalogues/index.js';
import { ComplianceMappingRepository } from './compliance-mapping.repository.js';
import type { ClauseStatus, ComplianceMappingNoteRow, Framework } from './compliance-mapping.schema.js';
import { type Coverage, coverageOf } from './coverage.js';
import {
  type CatalogueDto,
  type CrosswalkDto,
  type MappingDto,
  type MappingUpdateDto,
  toMappingNote,
  type UpdateMappingDto,
} from './dto/mapping.dto.js';
import { EvidenceRefs } from './evidence-refs.js';

export const DEFAULT_FRAMEWORK: Framework = 'iso-42001';
/** The audit entry keeps a short excerpt of the evidence, not all of it. */
const EXCERPT = 200;

/**
 * Clause attestations of an organization against the framework catalogues, with their coverage
 * (docs/compliance-officers.md, "Compliance mapping").
 */
@Injectable()
export class ComplianceMappingService {
  constructor(
    private readonly repo: ComplianceMappingRepository,
    private readonly refs: EvidenceRefs,
    private readonly audit: AuditLog,
    private readonly events: DomainEvents,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  catalogue(framework: Framework = DEFAULT_FRAMEWORK): CatalogueDto {
    const clauses = CATALOGUES[framework].map((c) => ({ ...c }));
    return { framework, totalClauses: clauses.length, clauses };
  }

  async mapping(actor: Actor, framework: Framework = DEFAULT_FRAMEWORK): Promise<MappingDto> {
    const rows = await this.repo.list(actor.organizationId, framework);
    const byClause = new Map(rows.map((r) => [r.clauseId, r]));
    const notes = CATALOGUES[framework]
      .map((c) => byClause.get(c.clauseId))
      .filter((r): r is ComplianceMappingNoteRow => r !== undefined)
      .map(toMappingNote);
    return {
      framework,
      totalClauses: CATALOGUES[framework].length,
      notes,
      coverage: this.coverage(framework, rows),
    };
  }

  /** Every framework's coverage and the status of each of its clauses (the compliance report's table). */
  async clauseTable(organizationId: string): Promise<
    Array<{
      framework: Framework;
      coverage: Coverage;
      clauses: Array<{ clauseId: string; title: string; status: ClauseStatus }>;
    }>
  > {
    const tables = [];
    for (const framework of FRAMEWORKS) {
      const rows = await this.repo.list(organizationId, framework);
      const statuses = new Map<string, ClauseStatus>(rows.map((r) => [r.clauseId, r.status]));
      tables.push({
        framework,
        coverage: this.coverage(framework, rows),
        clauses: CATALOGUES[framework].map((c) => ({
          clauseId: c.clauseId,
          title: c.title,
          status: statuses.get(c.clauseId) ?? 'gap',
        })),
      });
    }
    return tables;
  }

  /** The crosswalk themes with each clause's title and the organization's current status. */
  async crosswalk(actor: Actor): Promise<CrosswalkDto> {
    const statuses = new Map<Framework, Map<string, ClauseStatus>>();
    for (const framework of FRAMEWORKS) {
      const rows = await this.repo.list(actor.organizationId, framework);
      statuses.set(framework, new Map(rows.map((r) => [r.clauseId, r.status])));
    }
    return {
      themes: CROSSWALK.map((theme) => ({
        themeId: theme.themeId,
        title: theme.title,
        frameworks: FRAMEWORKS.map((framework) => ({
          framework,
          clauses: theme.clauses[framework].map((clauseId) => {
            const status = statuses.get(framework)!.get(clauseId);
            const title = CATALOGUES[framework].find((c) => c.clauseId === clauseId)!.title;
            return { clauseId, title, status: status ?? 'gap', noted: status !== undefined };
          }),
        })),
      })),
    };
  }

  async update(actor: Actor, dto: UpdateMappingDto, meta: RequestMeta): Promise<MappingUpdateDto> {
    const { framework, clauseId } = dto;
    if (!hasClause(framework, clauseId)) {
      throw AppError.validation(`clauseId is not a clause of ${framework}`, [
        { field: 'clauseId', message: `${clauseId} is not in the ${framework} catalogue` },
      ]);
    }
    const evidenceRefs = dto.evidenceRefs?.map((r) => ({ type: r.type, id: r.id }));
    return this.tx.run(async () => {
      if (evidenceRefs) await this.refs.assertExist(actor.organizationId, evidenceRefs);
      const row = await this.repo.upsert(
        actor.organizationId,
        framework,
        clauseId,
        {
          status: dto.status,
          evidence: dto.evidence,
          evidenceRefs,
          reviewedBy: actor.userId,
          reviewedByEmail: actor.email,
        },
        this.clock.now(),
      );
      const coverage = this.coverage(framework, await this.repo.list(actor.organizationId, framework));
      await this.audit.record(
        actor,
        'compliance.mapping.updated',
        { type: 'compliance_mapping_note', id: row.id },
        {
          framework,
          clauseId,
          status: row.status,
          evidenceLength: row.evidence?.length ?? 0,
          evidenceExcerpt: row.evidence?.slice(0, EXCERPT) ?? null,
          evidenceRefs: row.evidenceRefs,
        },
        meta,
      );
      await this.events.publish([
        {
          organizationId: actor.organizationId,
          type: 'compliance.mapping.updated',
          data: { framework, clauseId, status: row.status, coverage },
        },
      ]);
      return { note: toMappingNote(row), coverage };
    });
  }

  private coverage(framework: Framework, rows: readonly ComplianceMappingNoteRow[]): Coverage {
    const statuses = new Map<string, ClauseStatus>(rows.map((r) => [r.clauseId, r.status]));
    return coverageOf(
      CATALOGUES[framework].map((c) => c.clauseId),
      statuses,
    );
  }
}
