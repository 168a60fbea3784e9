import { objectIdParam } from '#platform';

/** The OpenAPI text of the policies routes (policies.controller.ts), kept out of the controller. */

export const POLICY_ID = objectIdParam('id', 'Policy id');

const CHANGE_EFFECT = 'Trace evaluation uses the change from the next trace on, on every replica.';
const AGENT_IDS_RULE =
  'Every id in `agentIds` must be an agent of the caller’s organization: an unknown, deleted or other ' +
  'organization’s agent id is a 400 VALIDATION_ERROR with a detail naming its position (`agentIds.2`), the ' +
  'same answer in each case, and nothing is stored.';

export const POLICY_DOCS = {
  list:
    'Active policies in evaluation order (priority, then creation). `includeInactive=true` lists all. ' +
    'limit default 100, max 100.',
  templates: 'Pre-built policies; `POST /policies {templateId, name?}` creates one from a template.',
  create:
    'Owner or admin. Either a full policy (`name`, `outcome`, `conditions` required) or `{templateId, name?}`. ' +
    'Conditions are validated by the engine: an unknown field or operator, a bad pattern, a wrongly typed ' +
    'value or too many conditions is a 400 VALIDATION_ERROR whose `details` name the path ' +
    `(\`conditions[0].operator\`). ${AGENT_IDS_RULE} Writes \`policy.created\`. ${CHANGE_EFFECT}`,
  update:
    'Owner or admin. Partial: only the fields sent change (`conditions` is replaced whole); the resulting ' +
    `policy is validated as a whole. ${AGENT_IDS_RULE} Writes \`policy.updated\` with the changed keys when ` +
    `something changed. ${CHANGE_EFFECT}`,
  remove: `Owner or admin. Writes \`policy.deleted\` (the audit entry is kept). ${CHANGE_EFFECT}`,
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const POLICY_ERRORS = {
  notFound: { 404: 'NOT_FOUND (no policy with this id in the caller’s organization)' },
} as const;
