import { objectIdParam } from '#platform';

/** The OpenAPI text of the integrations routes (integrations.controller.ts), kept out of the controller. */

export const INTEGRATION_ID = objectIdParam('id', 'Integration id');

const EDITORS = 'Owner, admin, or the member who created it.';

export const INTEGRATION_DOCS = {
  list: 'Any role. Newest first; limit default 50, max 100.',
  create:
    'Owner, admin or member. A webhook integration answers its `whsec_` signing secret this once. At most 50 ' +
    'per organization (409). Writes `integration.create`.',
  get: 'Any role. The URL is never shown, only its host.',
  update: `${EDITORS} name and/or config (replaced whole; the type cannot change). Writes \`integration.update\`.`,
  remove: `${EDITORS} Writes \`integration.delete\`.`,
  test:
    `${EDITORS} Sends now and answers whether the channel accepted it: an e-mail of fixed text to each ` +
    'confirmed recipient, one message per address (pending recipients get nothing; `sent` counts the messages ' +
    'accepted), a Slack message `{text}`, or a Standard Webhooks envelope of type `integration.test` signed with ' +
    'the secret. The integration’s name appears only as quoted data, never in a subject. At most 10 per user ' +
    'and 30 per organization per hour (429 RATE_LIMITED with Retry-After).',
  confirm:
    'Public. The token of the link mailed to a recipient who is not a member of the organization ' +
    '(`APP_URL/integrations/confirm?token=…`). Confirms that address for that integration only: it then receives ' +
    'the notifications and test sends. Single use, valid 7 days; an unknown, used or expired token is 400 ' +
    'INVALID_TOKEN. Limited per IP address like the /auth routes (429 RATE_LIMIT_EXCEEDED with Retry-After). ' +
    'Writes `integration.recipient.confirmed`.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const INTEGRATION_ERRORS = {
  test: { 429: 'RATE_LIMITED (10 per user, 30 per organization per hour; see Retry-After)' },
  confirm: {
    400: 'INVALID_TOKEN (unknown, used or expired token), VALIDATION_ERROR',
    429: 'RATE_LIMIT_EXCEEDED (per IP address; see Retry-After)',
  },
} as const;
