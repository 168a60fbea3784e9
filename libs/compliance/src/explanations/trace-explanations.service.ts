import { Injectable } from '@nestjs/common';
import { type Actor, AppError, canAccessAgent, Clock, isObjectId, type Role } from '#platform';
import {
  AgentsRepository,
  AuditService,
  PoliciesRepository,
  ReviewItemsRepository,
  TraceFeedbackRepository,
  TracesRepository,
} from '#governance';
import { MembersRepository, OrganizationsService } from '#identity';
import { PdfRenderer } from '../reports/pdf-renderer.js';
import { type TraceExplanationDto, toTraceExplanationResponse } from './dto/trace-explanation.dto.js';
import type { ExplainedTrace, ExplanationFacts } from './explanation-facts.js';
import { explanationFooter, explanationHtml } from './explanation.html.js';

export interface RenderedExplanation {
  pdf: Buffer;
  filename: string;
}

/**
 * Whether a trace can have been approved by an approval pattern at ingestion: only flag policies matched, yet it
 * got no review item (every flagged trace gets one) and was approved (then perhaps settled by feedback).
 */
function mayBeAutoApproved(trace: ExplainedTrace): boolean {
  return (
    trace.reviewItemId === null &&
    trace.policyResults.length > 0 &&
    trace.policyResults.every((p) => p.outcome === 'flag') &&
    (trace.status === 'approved' || trace.status === 'success')
  );
}

/** Reads shared by the explanations of many traces (a subject's report): each key is read once. */
export class ExplanationLookups {
  private readonly reads = new Map<string, Promise<unknown>>();

  once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let found = this.reads.get(key) as Promise<T> | undefined;
    if (!found) {
      found = read();
      this.reads.set(key, found);
    }
    return found;
  }
}

/**
 * GET /traces/:id/explanation: the explanation of one decision (EU AI Act art. 86) from the records of the modules
 * that hold them (the trace, its agent, the policies that matched, its review item, its feedback, the audit entry of
 * its ingestion, the organization's contest contact), as JSON or as a PDF for the person concerned. Nothing is
 * generated: see docs/compliance-officers.md, "Explaining a decision (art. 86)"; test/trace-explanation.e2e-spec.ts.
 */
@Injectable()
export class TraceExplanationsService {
  constructor(
    private readonly traces: TracesRepository,
    private readonly agents: AgentsRepository,
    private readonly policies: PoliciesRepository,
    private readonly reviewItems: ReviewItemsRepository,
    private readonly feedback: TraceFeedbackRepository,
    private readonly members: MembersRepository,
    private readonly organizations: OrganizationsService,
    private readonly audit: AuditService,
    private readonly renderer: PdfRenderer,
    private readonly clock: Clock,
  ) {}

  async explain(actor: Actor, id: string): Promise<TraceExplanationDto> {
    const { facts } = await this.gather(actor, id);
    return toTraceExplanationResponse(facts);
  }

  async pdf(actor: Actor, id: string): Promise<RenderedExplanation> {
    const { facts, organizationName } = await this.gather(actor, id);
    const explanation = toTraceExplanationResponse(facts);
    const document = { explanation, organizationName, generatedAt: this.clock.now() };
    const pdf = await this.renderer.render(explanationHtml(document), {
      footerTemplate: explanationFooter(document),
    });
    return { pdf, filename: `decision-explanation-${explanation.traceId}.pdf` };
  }

  /** A trace the caller may read (else 404, as GET /traces/:id), and what the records say about it. */
  private async gather(
    actor: Actor,
    id: string,
  ): Promise<{ facts: ExplanationFacts; organizationName: string }> {
    const organizationId = actor.organizationId;
    const trace = isObjectId(id) ? await this.traces.findById(organizationId, id) : undefined;
    // A trace outside the caller's agent scope is as invisible as one of another organization.
    if (!trace || !canAccessAgent(actor, trace.agentId)) throw AppError.notFound('Trace');
    const [facts, organization] = await Promise.all([
      this.factsOf(organizationId, trace),
      this.organizations.current(actor),
    ]);
    return { organizationName: organization.name, facts: { ...facts, contact: organization.contestContact } };
  }

  /**
   * What the records say about a trace already read, which the caller may read; all but the organization's contact.
   * One explanation, and each decision of a subject's report (GET /subjects/:ref/report), which passes one
   * `lookups` for all its traces so that each agent, policy and reviewer is read once.
   */
  async factsOf(
    organizationId: string,
    trace: ExplainedTrace,
    lookups: ExplanationLookups = new ExplanationLookups(),
  ): Promise<Omit<ExplanationFacts, 'contact'>> {
    const policyIds = [...new Set(trace.policyResults.map((p) => p.policyId))];
    const [agent, policies, review, feedback, autoApprovedBy] = await Promise.all([
      lookups.once(`agent:${trace.agentId}`, () => this.agents.find(organizationId, trace.agentId)),
      Promise.all(
        policyIds.map((policyId) =>
          lookups.once(`policy:${policyId}`, () => this.policies.find(organizationId, policyId)),
        ),
      ),
      trace.reviewItemId ? this.reviewItems.find(organizationId, trace.reviewItemId) : undefined,
      this.feedback.find(organizationId, trace.id),
      this.autoApprovedBy(organizationId, trace),
    ]);
    const decidedBy = review?.decidedBy ?? null;
    return {
      trace,
      agent,
      policies: new Map(
        policies.flatMap((p) =>
          p ? [[p.id, { conditions: p.conditions, match: p.match, updatedAt: p.updatedAt }] as const] : [],
        ),
      ),
      review,
      reviewerRole: decidedBy
        ? await lookups.once(`member:${decidedBy}`, () => this.reviewerRole(organizationId, decidedBy))
        : null,
      feedback,
      autoApprovedBy,
    };
  }

  /** The reviewer's role (never who they are); null when no member decided, or they have left. */
  private async reviewerRole(organizationId: string, userId: string | null): Promise<Role | null> {
    if (!userId) return null;
    return (await this.members.findMember(organizationId, userId))?.role ?? null;
  }

  /**
   * The approval pattern that approved the trace at ingestion: its metadata says, and once the content was erased
   * (the metadata with it), the audit entry of its ingestion (`trace.auto_approved`) still does.
   */
  private async autoApprovedBy(organizationId: string, trace: ExplainedTrace): Promise<string | null> {
    if (trace.metadata) {
      const id = trace.metadata.autoApprovedBy;
      return typeof id === 'string' ? id : null;
    }
    if (!mayBeAutoApproved(trace)) return null;
    const entry = await this.audit.traceIngestEntry(organizationId, trace, ['trace.auto_approved']);
    const id = entry?.metadata.autoApprovedBy;
    return typeof id === 'string' ? id : null;
  }
}
