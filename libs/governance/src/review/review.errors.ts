import { moduleErrorCodes } from '#platform';
/**
 * Error codes of the review queue, beside the generic ones in the platform (docs/dashboard-developers.md,
 * "Review, approval patterns, webhooks and the event stream").
 */
export const ReviewErrorCode = moduleErrorCodes({
  /** The item was approved or rejected already (also the loser of concurrent decisions). */
  ALREADY_DECIDED: 'ALREADY_DECIDED',
  /** Escalating an item that is escalated already. */
  ALREADY_ESCALATED: 'ALREADY_ESCALATED',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof ReviewErrorCode)[keyof typeof ReviewErrorCode], true> {}
}
