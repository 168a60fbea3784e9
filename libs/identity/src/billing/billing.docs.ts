/** The OpenAPI text of the billing routes (billing.controller.ts), kept out of the controller. */

const UNTIL_CONFIGURED =
  'Owner or admin. `{available: false, message}` until a payment provider is configured.';

export const BILLING_DOCS = {
  plan: 'Any role. `{plan, features}`.',
  checkout: UNTIL_CONFIGURED,
  portal: UNTIL_CONFIGURED,
} as const;
