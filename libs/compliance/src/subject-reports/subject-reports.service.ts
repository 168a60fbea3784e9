import { Injectable } from '@nestjs/common';
import { type Actor, AuditLog, Clock, type RequestMeta } from '#platform';
import { SubjectsService, TracesRepository } from '#governance';
import { OrganizationsService } from '#identity';
import {
  type TraceExplanationDto,
  toTraceExplanationResponse,
} from '../explanations/dto/trace-explanation.dto.js';
import { ExplanationLookups, TraceExplanationsService } from '../explanations/trace-explanations.service.js';
import { PdfRenderer } from '../reports/pdf-renderer.js';
import { subjectReportFooter, subjectReportHtml } from './subject-report.html.js';

/** The most decisions one report lists, newest first; the PDF says so when the records hold more. */
export const SUBJECT_REPORT_MAX_DECISIONS = 500;

/** Decisions whose records are read at once: a report does not take the whole connection pool. */
const READ_CONCURRENCY = 8;

export interface RenderedSubjectReport {
  pdf: Buffer;
  filename: string;
}

/**
 * GET /subjects/:ref/report: the decisions about a person (GDPR art. 15) as a PDF written for them. Each decision is
 * explained from the same facts as GET /traces/:id/explanation (TraceExplanationsService.factsOf); the subject is
 * read through the subjects module (its hash under the organization's key) and the report is audited as
 * `subject.accessed`, the subject named by its hash. See docs/data-protection.md, "The person's report (article
 * 15)"; test/subject-report.e2e-spec.ts.
 */
@Injectable()
export class SubjectReportsService {
  constructor(
    private readonly subjects: SubjectsService,
    private readonly traces: TracesRepository,
    private readonly explanations: TraceExplanationsService,
    private readonly organizations: OrganizationsService,
    private readonly renderer: PdfRenderer,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  async report(actor: Actor, ref: string, meta: RequestMeta): Promise<RenderedSubjectReport> {
    const subjectHash = this.subjects.hashOf(actor, ref);
    const organizationId = actor.organizationId;
    const [{ rows, total }, organization] = await Promise.all([
      this.traces.listBySubject(organizationId, subjectHash, {
        limit: SUBJECT_REPORT_MAX_DECISIONS,
        offset: 0,
      }),
      this.organizations.current(actor),
    ]);
    const contact = organization.contestContact;
    const lookups = new ExplanationLookups();
    const decisions: TraceExplanationDto[] = [];
    for (let i = 0; i < rows.length; i += READ_CONCURRENCY) {
      const facts = await Promise.all(
        rows
          .slice(i, i + READ_CONCURRENCY)
          .map((trace) => this.explanations.factsOf(organizationId, trace, lookups)),
      );
      decisions.push(...facts.map((f) => toTraceExplanationResponse({ ...f, contact })));
    }
    const generatedAt = this.clock.now();
    const document = {
      ref,
      organizationName: organization.name,
      decisions,
      total: Math.max(total, decisions.length),
      contact,
      generatedAt,
    };
    const pdf = await this.renderer.render(subjectReportHtml(document), {
      footerTemplate: subjectReportFooter(document),
    });
    // Audited once the report exists: what was handed over, the subject named by its hash.
    await this.audit.record(
      actor,
      'subject.accessed',
      { type: 'subject', id: subjectHash },
      {
        what: 'report',
        decisions: decisions.length,
        ...(document.total > decisions.length ? { total: document.total } : {}),
      },
      meta,
    );
    return { pdf, filename: `decisions-about-you-${generatedAt.toISOString().slice(0, 10)}.pdf` };
  }
}
