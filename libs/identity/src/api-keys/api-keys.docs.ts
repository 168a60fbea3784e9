import { objectIdParam } from '#platform';

/** The OpenAPI text of the workspace-key routes (api-keys.controller.ts), kept out of the controller. */

export const KEY_ID = objectIdParam('id', 'Key id');

const NOT_FOUND = { 404: 'NOT_FOUND (no live workspace key with this id in the caller’s organization)' };
const AGENT_IDS_RULE =
  'Every id in `scope.agentIds` must be an agent of the caller’s organization: an unknown, deleted or other ' +
  'organization’s agent id is a 400 VALIDATION_ERROR with a detail naming its position (`scope.agentIds.0`), ' +
  'the same answer in each case, and nothing is stored.';

export const API_KEY_DOCS = {
  create:
    'Owner or admin. Returns the `svc_live_` key once: only its SHA-256 is stored and it cannot be shown again. ' +
    `Send it as \`X-API-Key\`. ${AGENT_IDS_RULE} Writes \`auth.key_created\` (name, prefix and scope; never ` +
    'the key).',
  list: 'Owner or admin. Live (not revoked) keys, newest first, with their prefix only. limit default 50, max 100.',
  update:
    'Owner or admin. `scope` is merged: only the fields sent change (`agentIds: null` lifts the agent restriction). ' +
    `${AGENT_IDS_RULE} Takes effect on the key’s next request. Writes \`auth.key_updated\` when something ` +
    'changed.',
  revoke:
    'Owner or admin. The key is refused (401) from the next request on; it is kept, revoked, for the audit trail. ' +
    'Writes `auth.key_revoked`.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const API_KEY_ERRORS = {
  notFound: NOT_FOUND,
} as const;
