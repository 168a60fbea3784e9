import { AppError, type ErrorCodeName, renderError, successBody } from '#platform';
import type { IngestOutcome } from '../ingest-outcome.js';
import { TraceErrorCode } from '../traces.errors.js';

/** The codes of POST /traces replies: the success code of a flagged trace, and the error codes. */
export const TraceCode = {
  FLAGGED_FOR_REVIEW: 'SVC_FLAGGED_FOR_REVIEW',
  ...TraceErrorCode,
} as const;

/**
 * Status and full body of a POST /traces reply (each outcome has its own envelope: test/traces-ingest.e2e-spec.ts).
 */
export interface IngestResponse {
  status: 201 | 202 | 403 | 409;
  body: Record<string, unknown>;
}

/** An outcome answered with an error envelope that still carries data (the stored or earlier trace). */
function errorWithData(
  status: 403 | 409,
  code: ErrorCodeName,
  message: string,
  data: unknown,
): IngestResponse {
  return { status, body: renderError(new AppError(status, code, message, { extra: { data } })).body };
}

/** The reply to each outcome, its envelope built by the platform's renderers like every other body. */
export function toIngestResponse(outcome: IngestOutcome): IngestResponse {
  if (outcome.kind === 'duplicate') {
    return errorWithData(
      409,
      TraceCode.DUPLICATE_REQUEST,
      'A trace was already ingested with this Idempotency-Key within the last 24 hours',
      { id: outcome.id },
    );
  }
  const { id, status, confidence, policyResults, reviewItemId } = outcome.trace;
  if (status === 'blocked') {
    const names = policyResults.map((p) => p.name).join(', ');
    return errorWithData(403, TraceCode.BLOCKED_BY_POLICY, `Trace blocked by policy: ${names}`, {
      id,
      status,
      confidence,
      policies: policyResults,
    });
  }
  if (status === 'flagged') {
    return {
      status: 202,
      body: successBody(
        { id, status, confidence, message: 'Trace flagged for human review', reviewItemId },
        TraceCode.FLAGGED_FOR_REVIEW,
      ),
    };
  }
  return {
    status: 201,
    body: successBody({ id, status, confidence, message: 'Trace recorded and approved' }),
  };
}
