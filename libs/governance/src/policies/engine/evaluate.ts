import { PII_ENTITIES, type PiiEntity } from '../../pii/index.js';
import {
  type CompiledPolicy,
  type EvaluationScratch,
  newEvaluationScratch,
  type PolicyOutcome,
  type TraceFacts,
} from './condition.js';

export type EvaluationStatus = 'approved' | 'flagged' | 'blocked';

/** The shape stored in a trace's `policyResults` (evaluate.spec.ts). */
export interface PolicyResult {
  policyId: string;
  name: string;
  outcome: PolicyOutcome;
  /** The PII types its `containsPii` conditions found (types only, never values); absent when none did. */
  piiEntities?: PiiEntity[];
}

export interface PolicyEvaluation extends PolicyResult {
  matched: boolean;
}

export interface EvaluationResult {
  status: EvaluationStatus;
  /** The matched policies only, in priority order: ready to store as the trace's `policyResults`. */
  policyResults: PolicyResult[];
  /** Every policy that applied to the trace (active, in agent scope), matched or not, in priority order. */
  results: PolicyEvaluation[];
}

/** Lower priority number first; ties by id, compared by code unit so the order never depends on locale. */
export function comparePolicies(a: CompiledPolicy, b: CompiledPolicy): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function applies(policy: CompiledPolicy, trace: TraceFacts): boolean {
  return policy.isActive && (policy.agentIds === null || policy.agentIds.has(trace.agentId));
}

function matches(policy: CompiledPolicy, trace: TraceFacts, scratch: EvaluationScratch): boolean {
  return policy.match === 'any'
    ? policy.conditions.some((c) => c.test(trace, scratch))
    : policy.conditions.every((c) => c.test(trace, scratch));
}

/**
 * Evaluates a trace against compiled policies. Any matching block policy blocks; else any matching flag
 * policy flags; else the trace is approved. Every applicable policy is evaluated (not only up to the first
 * block) so that `policyResults` names all the policies that matched.
 */
export function evaluate(policies: readonly CompiledPolicy[], trace: TraceFacts): EvaluationResult {
  const scratch = newEvaluationScratch();
  const results: PolicyEvaluation[] = [];
  const ordered = policies.filter((p) => applies(p, trace)).sort(comparePolicies);
  let blocked = false;
  let flagged = false;
  for (const policy of ordered) {
    scratch.piiHits.clear();
    const matched = matches(policy, trace, scratch);
    if (matched && policy.outcome === 'block') blocked = true;
    if (matched && policy.outcome === 'flag') flagged = true;
    const result: PolicyEvaluation = {
      policyId: policy.id,
      name: policy.name,
      outcome: policy.outcome,
      matched,
    };
    if (matched && scratch.piiHits.size > 0)
      result.piiEntities = PII_ENTITIES.filter((e) => scratch.piiHits.has(e));
    results.push(result);
  }
  return {
    status: blocked ? 'blocked' : flagged ? 'flagged' : 'approved',
    policyResults: results
      .filter((r) => r.matched)
      .map(({ policyId, name, outcome, piiEntities }) => ({
        policyId,
        name,
        outcome,
        ...(piiEntities ? { piiEntities } : {}),
      })),
    results,
  };
}
