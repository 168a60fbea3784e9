import { objectIdParam } from '#platform';

/** The OpenAPI text of the FRIA routes (fria.controller.ts), kept out of the controller. */

export const ASSESSMENT_ID = objectIdParam('id', 'Assessment id');

export const FRIA_DOCS = {
  list:
    'Any role; plan feature friaWizard (403 UPGRADE_REQUIRED otherwise). Filters: status, search ' +
    '(case-insensitive substring of systemName). Most recently updated first; limit default 50, max 100. ' +
    'Each row carries its completeness.',
  create:
    'Owner, admin or member; plan feature friaWizard. Created as a draft. systemName required (trimmed, ' +
    '1–200). Risks as structured rows (identifiedRisks) or the wizard fields risksIdentified/mitigations, ' +
    'collapsed into one row; both at once is 400 VALIDATION_ERROR. Writes `fria.create`.',
  get:
    'Any role; plan feature friaWizard. With completeness: the share (0–100) of the 8 assessed fields ' +
    'populated. 404 for an unknown id or another organization’s assessment.',
  verify:
    'Any role; plan feature friaWizard. Recomputes the SHA-256 of the canonical stored contents and compares ' +
    'it with chainHash: matches is null when nothing was ever anchored. In review after edits it is false by ' +
    'design (the anchor is the submitted version); after approval false means the row changed outside the API.',
  history:
    'Any role; plan feature friaWizard. The assessment’s audit entries (fria.create, fria.update, ' +
    'fria.transition), oldest first, without ip or user agent; limit default 50, max 200. 404 for an unknown ' +
    'id or another organization’s assessment.',
  update:
    'Owner, admin or member; plan feature friaWizard. Only a draft or an assessment in review; approved or ' +
    'archived is 409 CONFLICT (an edit is not a move). In review the anchored chainHash is kept: it is the ' +
    'hash of the submitted version. Writes `fria.update` with the changed field names.',
  transition:
    'Owner, admin or member; a move to approved needs owner or admin (403 FORBIDDEN). Allowed: draft→review, ' +
    'review→approved, review→draft, approved→draft, any non-archived→archived; anything else (including the ' +
    'current state) is 400 FRIA_TRANSITION_FAILED. Entering review or approved anchors chainHash over the ' +
    'current contents; approval stamps approvedBy/approvedAt and emits `fria.approved`. Writes `fria.transition`.',
  submit: 'Same as a transition to review: owner, admin or member; only from draft.',
  approve:
    'Same as a transition to approved: owner or admin; only from review. Emits `fria.approved` with ' +
    '{id, systemName, chainHash, approvedBy, approvedAt}.',
  remove:
    'Owner, admin or member; plan feature friaWizard. Only a draft that was never submitted; any other ' +
    'assessment is 404 NOT_FOUND. Writes `fria.delete`.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const FRIA_ERRORS = {
  /** Every route's 500: the failed operation's code. */
  operationFailed: {
    500:
      'An unexpected failure of the operation, logged with its cause; the body carries only the request id and the ' +
      'operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, ' +
      'FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED',
  },
  transition: {
    400: 'VALIDATION_ERROR (status missing or unknown); FRIA_TRANSITION_FAILED (a move the lifecycle does not allow)',
  },
} as const;
