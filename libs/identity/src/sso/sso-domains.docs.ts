/** The OpenAPI text of the domain-claim routes (sso-domains.controller.ts), kept out of the controller. */

const WHO =
  'Owner only, on plans with `sso` (Governance and above): a verified domain routes its addresses’ sign-in to ' +
  'this organization’s IdP.';

export const DOMAIN = { name: 'domain', description: 'The claimed domain, e.g. `bigcorp.example`.' };

export const SSO_DOMAIN_DOCS = {
  list: `${WHO} Each domain with its state and the TXT record to publish.`,
  claim:
    `${WHO} Answers a pending claim with the record to publish: TXT \`_governance-challenge.<domain>\` holding ` +
    '`record.value`. Claiming again answers the same claim. Several organizations may hold pending claims on ' +
    'one domain; the first to verify owns it. A public suffix (Public Suffix List) or a free-mail provider is ' +
    '400. Writes `sso.domain.claimed`.',
  verify:
    `${WHO} Looks the TXT record up now (the system resolver, or \`SSO_DNS_SERVERS\`). Found: the domain is ` +
    '`verified` and routes sign-in to this organization; writes `sso.domain.verified`. Verified by another ' +
    'organization first: 409 SSO_DOMAIN_TAKEN. Not found: 400 DOMAIN_NOT_VERIFIED with `record`.',
  drop: `${WHO} The claim goes, and with it the domain’s routing. Writes \`sso.domain.removed\`.`,
} as const;

/** Answers other than the envelope. */
export const SSO_DOMAIN_RESPONSES = {
  drop: [{ status: 204, description: 'Dropped.' }],
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const SSO_DOMAIN_ERRORS = {
  verify: {
    400: 'DOMAIN_NOT_VERIFIED (no TXT record holds the value; the body names `record`)',
    404: 'NOT_FOUND (the organization has no claim on this domain)',
    409: 'SSO_DOMAIN_TAKEN (another organization verified the domain first)',
  },
} as const;
