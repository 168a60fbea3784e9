import { SSO_REQUIRED } from '../auth/auth.errors.js';
import { SESSIONS_LIST_CAP } from './sessions-management.service.js';

/** The OpenAPI text of the session routes (sessions.controller.ts), kept out of the controller. */

export const SESSION_DOCS = {
  refresh:
    'Mints a token with a new jti (same organization, the user’s current session timeout) and revokes the presented ' +
    'jti at once: a token can be refreshed once. Writes `auth.token_refreshed`, whose id is the new session id. ' +
    'Once the organization enforces its SSO for the caller’s address, a session its SSO did not open is not ' +
    'renewed (403 `SSO_REQUIRED`), except an owner’s.',
  revokeAll:
    'Blacklists every live jti of the user, in every organization, the current one included. ' +
    'Writes `auth.session_revoked` with `metadata.all = true` and the count.',
  revokeOne:
    '`sessionId` is the id of the audit entry that opened the session (as listed by GET /auth/sessions). ' +
    '`revoked` is 1, or 0 when the session was already revoked or has expired. Writes `auth.session_revoked`.',
  list: `Unexpired, unrevoked sessions of the user in every organization, newest first, at most ${SESSIONS_LIST_CAP}.`,
  setSessionTimeout:
    'Applies to tokens minted afterwards (login, refresh, switch-org); tokens already issued keep their expiry. ' +
    'Writes `auth.session_timeout_changed` when the value changes.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const SESSION_ERRORS = {
  refresh: { 403: SSO_REQUIRED },
  revokeOne: { 404: 'NOT_FOUND (no such session of the caller)' },
} as const;
