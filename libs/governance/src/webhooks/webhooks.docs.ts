import { objectIdParam } from '#platform';

/** The OpenAPI text of the webhooks routes (webhooks.controller.ts), kept out of the controller. */

export const WEBHOOK_ID = objectIdParam('id', 'Webhook id');
export const DELIVERY_ID = objectIdParam('deliveryId', 'Delivery id');

const NOT_FOUND = { 404: 'NOT_FOUND (no webhook with this id in the caller’s organization)' };
const URL_REFUSED = {
  400: 'VALIDATION_ERROR, or WEBHOOK_URL_NOT_ALLOWED (the host resolves to a loopback, private, link-local or reserved address)',
};
const DISABLED = { ...NOT_FOUND, 409: 'WEBHOOK_DISABLED' };

export const DELIVERY_RULES =
  'Deliveries follow Standard Webhooks: a POST of `{type, timestamp, data}` with the headers `webhook-id` (the ' +
  'event id, the same on every retry and redelivery: deduplicate on it), `webhook-timestamp` (Unix seconds) and ' +
  '`webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the secret’s base64 part). ' +
  'A 2xx within 10 s is success; redirects are not followed; failures are retried after about 30 s, 2 min, 10 min, ' +
  '1 h and 6 h (±20 %), a `Retry-After` on 429 or 503 is honoured, and a 410 disables the webhook.';

export const WEBHOOK_DOCS = {
  list:
    'Any role, or a workspace key (one scoped to agents sees the webhooks filtered on them). Newest first; limit ' +
    'default 50, max 100. Secrets are never shown again.',
  create:
    'Owner, admin, or a writable workspace key (a read-only key gets 403; a key scoped to agents must set ' +
    '`filterAgentId` to one of them). Answers the webhook with its `whsec_` signing secret, shown this once and ' +
    `stored encrypted. At most 50 per organization (409). ${DELIVERY_RULES} Writes \`webhook.created\`.`,
  get: 'Any role, or a workspace key.',
  update:
    'Owner or admin. Any of `url` (checked again by the SSRF guard), `events`, `filterAgentId`, `description` ' +
    'and `isActive` (`true` enables a webhook a 410 disabled). Writes `webhook.updated`.',
  delete:
    'Owner, admin, or a writable workspace key. Its pending deliveries are not sent. Writes `webhook.deleted`.',
  rotateSecret:
    'Owner or admin. Answers the new secret, shown this once. With `gracePeriodSeconds` (0 to 604800, default ' +
    '0) the old secret keeps signing for that long: deliveries then carry both signatures, space-separated in ' +
    '`webhook-signature`; with 0 only the new one. Writes `webhook.secret_rotated`.',
  test:
    'Owner or admin. Sends `webhook.test` to this webhook, whatever it subscribes to, and answers the delivery ' +
    'after its first attempt (up to 10 s): `status` `succeeded`, or `pending` with the error and the next ' +
    'attempt. A disabled webhook gets 409 `WEBHOOK_DISABLED`. Writes `webhook.tested`.',
  deliveries:
    'Any role. Newest first; limit default 50, max 100; `status` filters. Each delivery shows its attempts, the ' +
    'last answer (status and the first 1 KiB of the body) or error, and when the next attempt runs. Kept as ' +
    'long as events (EVENT_RETENTION_DAYS).',
  redeliver:
    'Owner or admin. A new delivery of the same event (the same `webhook-id`, so receivers can tell), answered ' +
    'after its first attempt. A disabled webhook gets 409 `WEBHOOK_DISABLED`; an event past its retention 404. ' +
    'Writes `webhook.redelivered`.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const WEBHOOK_ERRORS = {
  create: { ...URL_REFUSED, 409: 'CONFLICT (the organization has 50 webhooks)' },
  notFound: NOT_FOUND,
  update: { ...NOT_FOUND, ...URL_REFUSED },
  disabled: DISABLED,
} as const;
