/** The OpenAPI text of the trace purge's route (trace-purge.controller.ts), kept out of the controller. */

export const TRACE_PURGE_DOCS = {
  purge:
    'Owner only. Deletes the organization’s traces created before `before` (optionally one agent’s, one ' +
    'status’s), with their review items and feedback, 1,000 per transaction so ingestion is not held up. Audit ' +
    'entries are never deleted, so the chain still verifies; one entry `traces.purged` records the filter and ' +
    'the count. `dryRun: true` counts and deletes nothing. Answers `{matched, purged}`.',
} as const;
