import { objectIdParam } from '#platform';

/** The OpenAPI text of the member routes (team.controller.ts), kept out of the controller. */

export const USER_ID = objectIdParam('userId', 'User id of the member');

const NOT_FOUND = { 404: 'NOT_FOUND (no member with this user id in the caller’s organization)' };
const OWNER_RULE = {
  403: 'FORBIDDEN (role lacks permission; only an owner may grant the owner role or change an owner)',
};
const LAST_OWNER =
  'VALIDATION_ERROR (invalid body, or the change would leave the organization without an active owner)';

export const TEAM_DOCS = {
  list: 'Any role. Active and suspended members, oldest membership first. Paginated: limit default 100, max 200.',
  changeRole:
    'Owner or admin; only an owner may grant the owner role or change an owner. Several owners are allowed, but ' +
    'the organization always keeps one active owner. Takes effect on the member’s next request. Writes ' +
    '`team.member.role_changed` with `{from, to}` (nothing when the role is unchanged).',
  suspend:
    'Owner or admin; only an owner may suspend an owner, and the last active owner cannot be suspended. The body ' +
    'is optional (`{isActive: false}` or none). The member’s open sessions get 401 ACCOUNT_DEACTIVATED and login ' +
    'skips this organization until reactivation. Writes `team.member.suspended` (nothing when already suspended).',
  reactivate:
    'Owner or admin; only an owner may reactivate an owner. The same membership, with its role, becomes active ' +
    'again. Writes `team.member.reactivated` (nothing when already active).',
  remove:
    'Owner or admin; only an owner may remove an owner, and the last active owner cannot be removed. Deletes the ' +
    'membership; the user account survives with its other organizations. The member’s sessions in this ' +
    'organization are refused from the next request. Writes `team.member.removed`.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const TEAM_ERRORS = {
  /** A change that could leave the organization without an active owner. */
  change: { ...NOT_FOUND, ...OWNER_RULE, 400: LAST_OWNER },
  reactivate: { ...NOT_FOUND, ...OWNER_RULE },
} as const;
