import { objectIdParam } from '#platform';

/** The OpenAPI text of the incidents routes (incidents.controller.ts), kept out of the controller. */

export const INCIDENT_ID = objectIdParam('id', 'Incident id');

const CLOCK =
  'timeLeftSeconds and overdue are computed at the time of the request: while open, the whole seconds to the ' +
  'deadline (0 once past) and whether it has passed; once reported or closed the clock stops (null, false).';

export const INCIDENT_DOCS = {
  list:
    `Any role. Filters: status, overdue (true: open and past the deadline). Newest first; limit default 50, ` +
    `max 100. ${CLOCK}`,
  create:
    'Owner, admin or member. The deadline is awareAt plus 10 days (death), 2 (widespread_infringement, ' +
    'critical_infrastructure) or 15 (other). awareAt may not be in the future; agentId and traceId must be the ' +
    'organization’s (400 VALIDATION_ERROR otherwise). Opens the incident and writes `incident.create`.',
  get: `Any role. ${CLOCK}`,
  update:
    'Owner, admin or member. open → reported (reportedAt, default now, between awareAt and now) or closed; ' +
    'reported → closed. The current status again (without reportedAt) changes nothing. Writes ' +
    '`incident.update`. Errors: 400 VALIDATION_ERROR, 404 NOT_FOUND, 409 CONFLICT (a move not allowed, or a ' +
    'concurrent change).',
} as const;
