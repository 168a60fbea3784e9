/**
 * The event names a webhook may subscribe to (docs/dashboard-developers.md,
 * "Review, approval patterns, webhooks and the event stream"); the stream carries the same.
 */
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
