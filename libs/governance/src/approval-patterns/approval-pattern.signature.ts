import { sha256Hex } from '#platform';

/** What makes two flagged traces the same kind of decision. */
export interface PatternSignature {
  agentId: string;
  action: string | null;
  policyIds: string[];
}

/**
 * Observations at least, and the approval rate at least, for a pattern to await signoff
 * (test/approval-patterns.e2e-spec.ts).
 */
export const PATTERN_MIN_OBSERVATIONS = 50;
export const PATTERN_APPROVAL_PERCENT = 95;

/** An action longer than the column is cut: two actions equal on their first 512 characters count as one. */
export const PATTERN_ACTION_MAX = 512;

/** The signature of a trace's outcome: its agent, its action (a string, else none) and the sorted policy ids. */
export function signatureOf(
  agentId: string,
  action: unknown,
  policyIds: readonly string[],
): PatternSignature {
  return {
    agentId,
    action: typeof action === 'string' ? action.slice(0, PATTERN_ACTION_MAX) : null,
    policyIds: [...new Set(policyIds)].sort(),
  };
}

export function signatureHash(signature: PatternSignature): string {
  return sha256Hex(JSON.stringify([signature.agentId, signature.action, signature.policyIds]));
}

/** Whether counts qualify a pattern for signoff: ≥ 50 observations with ≥ 95 % approvals. */
export function qualifies(observations: number, approvals: number): boolean {
  // In integers: 100 × approvals ≥ 95 × observations, with no rounding at the boundary.
  return (
    observations >= PATTERN_MIN_OBSERVATIONS && approvals * 100 >= PATTERN_APPROVAL_PERCENT * observations
  );
}
