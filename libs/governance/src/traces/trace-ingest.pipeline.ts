import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AppError,
  auditActorOf,
  canAccessAgent,
  Clock,
  isObjectId,
  Metrics,
  newId,
  PII_ENTITIES,
  type PiiEntity,
  type RequestMeta,
  type SchemaVersion,
} from '#platform';
import type { Histogram } from 'prom-client';
import { ActivePatterns } from '../approval-patterns/active-patterns.js';
import { signatureOf } from '../approval-patterns/approval-pattern.signature.js';
import {
  estimateConfidence,
  evaluate,
  type PolicyResult,
  type TraceFacts,
} from '../policies/engine/index.js';
import { PolicySet } from '../policies/policy-set.js';
import { newPendingReviewItem } from '../review/review-items.repository.js';
import { SubjectKeys } from '../subjects/subject-key.js';
import type { IngestOutcome } from './ingest-outcome.js';
import { maskContent, PiiMasking } from './pii-masking.js';
import { contentHashOf, newContentSalt } from './trace-content.js';
import type { TraceIngestInput } from './trace-ingest.validation.js';
import type { TraceRow } from './trace.schema.js';
import { type TraceSource, type TraceWrite, TraceWriter, unknownAgentError } from './trace-writer.js';

/** searchText holds prompt and output text up to this length: enough for similarity, bounded for the index. */
export const SEARCH_TEXT_MAX = 8000;

/** Seconds, from 10 µs to 100 ms: one trace against an organization's policies is pure computation. */
const POLICY_EVALUATION_BUCKETS = [
  0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
];

export interface IngestContext {
  /** The schema version in force for the request; its limits apply and it is stored on the trace. */
  schemaVersion: SchemaVersion;
  idempotencyKey?: string;
  meta?: RequestMeta;
}

const agentIdError = (message: string) => AppError.validation(message, [{ field: 'agentId', message }]);

/**
 * The ingest pipeline shared by POST /traces and OTLP. `prepare` decides everything before the database:
 * confidence (given, or estimated before policies), policy evaluation, and the rows to write (the trace, the review
 * item of a flagged trace, the audit entry). `store` hands prepared traces to the trace writer, which commits each
 * with its review item and audit entry and settles its idempotency key. Blocked and flagged traces are stored too.
 */
@Injectable()
export class TraceIngestPipeline {
  private readonly evaluationSeconds: Histogram;

  constructor(
    private readonly policies: PolicySet,
    private readonly patterns: ActivePatterns,
    private readonly writer: TraceWriter,
    private readonly clock: Clock,
    private readonly subjectKeys: SubjectKeys,
    private readonly masking: PiiMasking,
    metrics: Metrics,
  ) {
    this.evaluationSeconds = metrics.histogram({
      name: 'governance_policy_evaluation_seconds',
      help: "One trace evaluated against its organization's policies",
      buckets: POLICY_EVALUATION_BUCKETS,
    });
  }

  /**
   * The agent a trace is recorded for: an agent key's own agent (a different body agentId is 403), or for
   * a workspace key the body's agentId, which is required and must lie in the key's scope. That the agent
   * exists in the caller's organization is checked where the trace is written, under the chain lock.
   */
  resolveAgent(actor: Actor, requested: string | undefined): string {
    let agentId: string;
    if (actor.credential === 'agentKey') {
      if (!actor.agentId) throw AppError.forbidden('This agent key is not bound to an agent');
      if (requested !== undefined && requested !== actor.agentId) {
        throw AppError.forbidden('agentId must be the agent this key is bound to');
      }
      agentId = actor.agentId;
    } else {
      if (!requested) throw agentIdError('agentId is required when ingesting with a workspace key');
      if (!canAccessAgent(actor, requested))
        throw AppError.forbidden('This API key is not scoped to that agent');
      agentId = requested;
    }
    if (!isObjectId(agentId)) throw unknownAgentError();
    return agentId;
  }

  /**
   * Stores traces prepared for one request together, committed with their review items and audit entries: all
   * accepted, or none (503, or 413 for more than could ever fit) when ingestion is saturated. `source` labels them
   * in the ingestion counter.
   */
  store(
    organizationId: string,
    writes: TraceWrite[],
    source: TraceSource = 'http',
  ): Promise<IngestOutcome>[] {
    return this.writer.writeAll(organizationId, writes, source);
  }

  /**
   * Everything decided before the database: confidence (given, or estimated before policies), policy evaluation,
   * and the rows to write (trace, review item of a flagged trace, audit entry).
   */
  async prepare(
    actor: Actor,
    agentId: string,
    input: TraceIngestInput,
    ctx: IngestContext,
  ): Promise<TraceWrite> {
    const organizationId = actor.organizationId;
    const confidence = input.confidence ?? estimateConfidence(input.outputDecision.text);
    const facts: TraceFacts = {
      agentId,
      confidence,
      inputContext: input.inputContext,
      outputDecision: input.outputDecision,
      metadata: input.metadata ?? {},
    };
    const policies = await this.policies.forOrganization(organizationId);
    const started = performance.now();
    const evaluation = evaluate(policies, facts);
    this.evaluationSeconds.observe((performance.now() - started) / 1000);
    // `metadata.autoApprovedBy` is the service's to set: a client's value is not kept.
    const { autoApprovedBy: _claimed, ...given } = input.metadata ?? {};
    // Policies saw the original; what is stored, hashed, indexed and published is masked, when the organization
    // masks (docs/data-protection.md, "Masking at ingestion").
    const maskOptions = await this.masking.optionsFor(organizationId);
    const sent = {
      inputContext: input.inputContext,
      outputDecision: input.outputDecision,
      metadata: given,
      rationale: input.rationale ?? null,
    };
    const content = maskOptions ? maskContent(sent, maskOptions) : { ...sent, piiMasked: null };
    const { inputContext, outputDecision, rationale } = content;
    // A flagged trace whose kind reviewers always approve, and an owner signed off, is approved at once. The kind is
    // read from the stored action, as the review queue reads it when it learns a pattern.
    const autoApprovedBy =
      evaluation.status === 'flagged'
        ? await this.patterns.match(
            organizationId,
            signatureOf(
              agentId,
              outputDecision.action,
              evaluation.policyResults.map((p) => p.policyId),
            ),
          )
        : null;
    const status = autoApprovedBy ? 'approved' : evaluation.status;
    const metadata = autoApprovedBy ? { ...content.metadata, autoApprovedBy } : content.metadata;
    const now = this.clock.now();
    const id = newId(now.getTime());
    const contentSalt = newContentSalt();
    const reviewItemId = status === 'flagged' ? newId(now.getTime()) : null;
    const trace: TraceRow = {
      id,
      organizationId,
      agentId,
      status,
      confidence,
      inputContext,
      outputDecision,
      metadata,
      rationale,
      schemaVersion: ctx.schemaVersion.version,
      humanOverride: false,
      policyResults: evaluation.policyResults,
      reviewItemId,
      searchText: searchTextOf({ inputContext, outputDecision }),
      piiMasked: content.piiMasked,
      contentSalt,
      // Set by the writer: the id of the audit entry is made with the chain's head.
      contentEntryId: null,
      subjectHash:
        input.subjectRef === undefined ? null : this.subjectKeys.hashOf(organizationId, input.subjectRef),
      erasedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    return {
      trace,
      reviewItem: reviewItemId
        ? newPendingReviewItem({
            id: reviewItemId,
            organizationId,
            traceId: id,
            agentId,
            matchedPolicies: evaluation.policyResults,
            createdAt: now,
          })
        : null,
      audit: {
        eventType: autoApprovedBy ? 'trace.auto_approved' : `trace.${status}`,
        actor: auditActorOf(actor),
        targetType: 'trace',
        targetId: id,
        metadata: {
          agentId,
          confidence,
          schemaVersion: ctx.schemaVersion.version,
          policyIds: evaluation.policyResults.map((p) => p.policyId),
          contentHash: contentHashOf(contentSalt, trace),
          ...(reviewItemId ? { reviewItemId } : {}),
          ...(autoApprovedBy ? { autoApprovedBy } : {}),
          ...piiEntitiesOf(evaluation.policyResults),
        },
        meta: ctx.meta,
      },
      idempotencyKey: ctx.idempotencyKey,
      keyId: actor.credential === 'jwt' ? null : (actor.keyId ?? null),
    };
  }
}

/** `{piiEntities}`: the PII types the matched policies found, for the audit entry and the trace's event; {} if none. */
function piiEntitiesOf(results: readonly PolicyResult[]): { piiEntities?: PiiEntity[] } {
  if (!results.some((r) => r.piiEntities)) return {};
  const found = new Set(results.flatMap((r) => r.piiEntities ?? []));
  return { piiEntities: PII_ENTITIES.filter((e) => found.has(e)) };
}

/** Prompt and output text, bounded: what GET /traces/:id/similar compares. */
export function searchTextOf(input: Pick<TraceIngestInput, 'inputContext' | 'outputDecision'>): string {
  return `${input.inputContext.prompt}\n${input.outputDecision.text}`.slice(0, SEARCH_TEXT_MAX);
}
