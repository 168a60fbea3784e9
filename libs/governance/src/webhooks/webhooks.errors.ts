import { moduleErrorCodes } from '#platform';
/**
 * Error codes of webhooks, beside the generic ones in the platform (docs/dashboard-developers.md,
 * "Review, approval patterns, webhooks and the event stream").
 */
export const WebhookErrorCode = moduleErrorCodes({
  /** The URL's host resolves to a loopback, private, link-local or reserved address. */
  WEBHOOK_URL_NOT_ALLOWED: 'WEBHOOK_URL_NOT_ALLOWED',
  /** Redelivery or a test send to a webhook that is disabled. */
  WEBHOOK_DISABLED: 'WEBHOOK_DISABLED',
});

declare module '#platform' {
  interface ModuleErrorCodes extends Record<(typeof WebhookErrorCode)[keyof typeof WebhookErrorCode], true> {}
  interface OutboxTopics {
    /** One attempt of a webhook delivery (the row of webhook_deliveries it names). */
    'webhook.deliver': { payload: { deliveryId: string } };
  }
}
