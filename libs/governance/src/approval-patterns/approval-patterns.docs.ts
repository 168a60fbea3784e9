import { objectIdParam } from '#platform';

/** The OpenAPI text of the approval patterns' routes (approval-patterns.controller.ts), kept out of the controller. */

export const APPROVAL_PATTERN_ID = objectIdParam('id', 'Approval pattern id');

export const APPROVAL_PATTERN_DOCS = {
  list:
    'Any role. A pattern is a signature (agent, `outputDecision.action`, sorted matched policy ids) with its ' +
    'review decisions counted: each approve or reject is one observation. At 50 observations or more with 95 % ' +
    'approvals or more it moves from `observing` to `pending_signoff`. Most recently changed first; limit ' +
    'default 50, max 100.',
  signoff:
    'Owner or admin; only from `pending_signoff`. The pattern becomes `active`: from then on a trace that ' +
    'policies flag with its signature is stored approved with `metadata.autoApprovedBy` (the pattern id), ' +
    'answered 201, audited `trace.auto_approved`, and gets no review item. Writes `approval_pattern.signed_off`.',
  revoke:
    'Owner or admin; from `active` or `pending_signoff`. The pattern goes back to `observing` with its counts ' +
    'reset, and flagged traces with its signature go to review again. Writes `approval_pattern.revoked`.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const APPROVAL_PATTERN_ERRORS = {
  stateConflict: { 409: 'PATTERN_STATE_CONFLICT (the pattern is not in a state this move starts from)' },
} as const;
