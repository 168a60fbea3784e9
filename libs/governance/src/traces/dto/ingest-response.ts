import type { IngestOutcome } from '../ingest-outcome.js';

export const TraceCode = {
  FLAGGED_FOR_REVIEW: 'SVC_FLAGGED_FOR_REVIEW',
  BLOCKED_BY_POLICY: 'SVC_BLOCKED_BY_POLICY',
  DUPLICATE_REQUEST: 'SVC_DUPLICATE_REQUEST',
} as const;

/** Status and full body of a POST /traces reply (each outcome has its own envelope, contract §5). */
export interface IngestResponse {
  status: 201 | 202 | 403 | 409;
  body: Record<string, unknown>;
}

export function toIngestResponse(outcome: IngestOutcome): IngestResponse {
  if (outcome.kind === 'duplicate') {
    return {
      status: 409,
      body: {
        success: false,
        code: TraceCode.DUPLICATE_REQUEST,
        error: 'A trace was already ingested with this Idempotency-Key within the last 24 hours',
        data: { id: outcome.id },
      },
    };
  }
  const { id, status, confidence, policyResults, reviewItemId } = outcome.trace;
  if (status === 'blocked') {
    const names = policyResults.map((p) => p.name).join(', ');
    return {
      status: 403,
      body: {
        success: false,
        code: TraceCode.BLOCKED_BY_POLICY,
        error: `Trace blocked by policy: ${names}`,
        data: { id, status, confidence, policies: policyResults },
      },
    };
  }
  if (status === 'flagged') {
    return {
      status: 202,
      body: {
        success: true,
        code: TraceCode.FLAGGED_FOR_REVIEW,
        data: { id, status, confidence, message: 'Trace flagged for human review', reviewItemId },
      },
    };
  }
  return {
    status: 201,
    body: { success: true, data: { id, status, confidence, message: 'Trace recorded and approved' } },
  };
}
