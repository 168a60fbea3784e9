import { objectIdParam } from '#platform';

/** The OpenAPI text of the agents routes (agents.controller.ts), kept out of the controller. */

export const AGENT_ID = objectIdParam('id', 'Agent id');

const NOT_FOUND = {
  404: 'NOT_FOUND (no agent with this id in the caller’s organization, or outside the API key’s scope)',
};
const OWNERSHIP = {
  403: 'FORBIDDEN (role lacks permission, a member changing an agent created by someone else, or an API key)',
};
const OWNERSHIP_RULE =
  'Owner or admin for any agent; a member only for agents they created. User session only: API keys get 403.';

export const AGENT_DOCS = {
  list:
    'Any role, a workspace key or an agent key. Newest first; limit default 50, max 100. A workspace key scoped ' +
    'to agents lists only those; an agent key lists only its own agent. `keyPrefix` is the start of the live key.',
  create:
    'Owner, admin or member. Returns the agent with its `svc_agent_` key in `apiKey`, shown this once (only its ' +
    'SHA-256 is stored). The key is bound to this agent: its scope is fixed at creation and kept by ' +
    'regeneration. Writes `agent.created` (name and key prefix; never the key).',
  get:
    'Any role, a workspace key within its scope, or an agent key for its own agent. An agent outside the ' +
    'caller’s scope answers 404, like an absent one, so that other agents’ ids are not disclosed. `analytics` ' +
    'is computed over the agent’s traces: counts by status, mean confidence (two decimals, null when there ' +
    'are no traces), `humanOverrideRate` (traces with `humanOverride` over all the agent’s traces until human ' +
    'verdicts are recorded separately; null when there are none) and the time of the last trace.',
  update: `${OWNERSHIP_RULE} Writes \`agent.updated\` with the changes (nothing when nothing changed).`,
  remove:
    `${OWNERSHIP_RULE} The agent’s traces are retained; its key is revoked at once (401 from the next ` +
    'request). Its id leaves the `agentIds` of the organization’s policies and the `scope.agentIds` of its ' +
    'workspace keys in the same transaction; a policy or key left naming no agent (which would mean every ' +
    'agent) is deactivated or revoked instead of widened. Writes `agent.deleted` (listing them in ' +
    '`detachedFrom`) and, per changed record, `policy.updated`, `auth.key_updated` or `auth.key_revoked` with ' +
    '`reason: agent_deleted`.',
  regenerateKey:
    `${OWNERSHIP_RULE} Returns the new key in \`apiKey\`, shown this once, with the same scope as the old ` +
    'one; the old key is refused (401) from now on. Writes `agent.key_regenerated` (prefixes only).',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const AGENT_ERRORS = {
  notFound: NOT_FOUND,
  owned: { ...NOT_FOUND, ...OWNERSHIP },
} as const;
