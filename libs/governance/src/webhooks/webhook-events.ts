/** The event names a webhook may subscribe to (contract §8); the stream carries the same. */
export const WEBHOOK_EVENTS = [
  'trace.approved',
  'trace.flagged',
  'trace.blocked',
  'review.completed',
  'review.escalated',
  'fria.approved',
  'compliance.mapping.updated',
  'cpi.approved',
  'cpi.corrected',
  'alert.triggered',
  'alert.resolved',
  'audit.checkpoint',
  'webhook.test',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
