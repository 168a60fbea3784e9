/** The OpenAPI text of the CPI routes (cpi.controller.ts), kept out of the controller. */

const READ_LIMIT =
  'Counted by the CPI read limiter, which GET /cpi and GET /cpi/analytics share: 60 requests per user per 15 ' +
  'minutes (CPI_RATE_LIMIT_MAX, CPI_RATE_LIMIT_WINDOW_MS), shared by the replicas through Redis when REDIS_URL is ' +
  'set; every authenticated answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, and ' +
  'beyond the limit 429 RATE_LIMITED with Retry-After.';

export const CPI_DOCS = {
  rollup:
    'Every role. Over all the organization’s traces: counts by status, human verdicts (a review item approved ' +
    'or rejected, or feedback through POST /cpi/ingest; a trace with both counts once, by the later), the ' +
    'correct-flag rate (decided flags rejected or corrected), false-flag rate (decided flags approved), ' +
    'human-override rate (humanOverride among traces with a verdict), mean confidence per status and 30 daily ' +
    `points. Computed in SQL from daily rollups, never by loading traces. ${READ_LIMIT}`,
  analytics:
    'Every role. Per agent: traces, verdicts, overrides and override rate (overrides / traces); the 10 most ' +
    'frequent notes of traces whose latest feedback is a correction; the mean confidence before and after corrections that gave one; and how long ' +
    `after a trace its first correction came (<1h, 1-24h, 1-7d, >7d). ${READ_LIMIT}`,
  ingest:
    'Workspace key only (not read-only); enterprise and custom plans (cpiFeedbackIngest), else 403 FORBIDDEN. ' +
    'approve sets the trace to success with humanOverride false; correct (or a correctedDecision without action) ' +
    'replaces the decision, keeps the original, sets humanOverride true. A pending or escalated review item of ' +
    'the trace closes in the same transaction, `approved` for approve and `rejected` for correct, with ' +
    '`resolution: feedback`: audited `review.approved|rejected` naming the key and userEmail, announced as ' +
    '`review.completed`; deciding it afterwards answers 409 ALREADY_DECIDED. Errors: 400 VALIDATION_ERROR, ' +
    '404 NOT_FOUND (trace not in the organization), 409 TRACE_ERASED (the subject’s content was erased: a verdict ' +
    'would write into it). The verdict’s audit entry records the content hash of the trace after it (GET ' +
    '/traces/{id}/verify checks against it from then on) and whether there were notes, not the notes.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const CPI_ERRORS = {
  rateLimited: { 429: 'RATE_LIMITED (the CPI read limiter; see Retry-After)' },
  ingest: { 409: 'TRACE_ERASED: the trace’s content was erased at its subject’s request' },
} as const;
