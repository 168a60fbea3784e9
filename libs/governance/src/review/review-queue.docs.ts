import { objectIdParam } from '#platform';

/** The OpenAPI text of the review queue's routes (review-queue.controller.ts), kept out of the controller. */

export const REVIEW_ITEM_ID = objectIdParam('id', 'Review item id');

const NOT_FOUND = { 404: 'NOT_FOUND (no review item with this id in the caller’s organization)' };
const DECISION_RULES =
  '`approve` → item `approved`, trace `approved`; `reject` → item `rejected`, trace `blocked`; `escalate` → item ' +
  '`escalated`, trace stays `flagged`, and from then on only an owner or admin may decide it. Approve and reject ' +
  'each count one observation of the item’s approval pattern. The decision, the trace’s status, the audit entry ' +
  '(`review.approved|rejected|escalated`) and the event (`review.completed` or `review.escalated`, to webhooks ' +
  'and the event stream) commit together. Feedback on the trace (POST /cpi/ingest) closes a pending or escalated ' +
  'item itself (`resolution: feedback`), after which a decision answers 409 `ALREADY_DECIDED`.';

export const REVIEW_QUEUE_DOCS = {
  list:
    'Any role. `status` defaults to `pending`; `assignedTo` takes a user id, `me` or `none`. Oldest first (the ' +
    'head of the queue); limit default 50, max 100. Each item carries an excerpt of its trace (prompt and ' +
    'output text, 500 characters each, and the confidence) and the policies that flagged it.',
  bulk:
    `Owner, admin or member. 1 to 100 ids, each decided on its own as by the single decision: ${DECISION_RULES} ` +
    'Answers the ids decided in `processed` and, for each other id, its error code and message in `failed` ' +
    '(`NOT_FOUND`, `ALREADY_DECIDED`, `ALREADY_ESCALATED`, `FORBIDDEN`, `TRACE_ERASED`).',
  decide:
    `Owner, admin or member; viewers read only. ${DECISION_RULES} An item approved or rejected already answers ` +
    '409 `ALREADY_DECIDED`, also to the losers of concurrent decisions; escalating an escalated item answers 409 ' +
    '`ALREADY_ESCALATED`; a member deciding an escalated item gets 403. Notes on an item whose trace’s content was ' +
    'erased at its subject’s request answer 409 `TRACE_ERASED` (decide it without notes).',
  assign:
    'Owner, admin or member. `assignedTo` is the user id of an active member of the organization (else 400), or ' +
    'null to unassign. Writes `review.assigned` when the assignee changes.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const REVIEW_QUEUE_ERRORS = {
  decide: {
    ...NOT_FOUND,
    409:
      'ALREADY_DECIDED (approved or rejected already), ALREADY_ESCALATED, or TRACE_ERASED (notes on a trace whose ' +
      'content was erased)',
  },
  notFound: NOT_FOUND,
} as const;
