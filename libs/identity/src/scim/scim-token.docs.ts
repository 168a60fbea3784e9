/** The OpenAPI text of the SCIM token routes (scim-token.controller.ts), kept out of the controller. */

const WHO = 'Owner or admin, on plans with `scim` (Enterprise).';
const OWNER =
  'Owner only, on plans with `scim` (Enterprise): the token provisions, deactivates and re-roles members, owners ' +
  'included, so an admin may see whether it exists but not mint or revoke it.';

export const SCIM_TOKEN_DOCS = {
  rotate:
    `${OWNER} Answers the token once (\`scim_\` and 48 hexadecimal characters); only its SHA-256 is kept. A new ` +
    'token revokes the previous one at once (it then gets 401). Writes `scim.token.created`.',
  status: WHO,
  revoke: `${OWNER} The token stops working at once. Writes \`scim.token.revoked\` when there was one.`,
} as const;
