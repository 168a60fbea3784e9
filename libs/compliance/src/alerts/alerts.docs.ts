import { objectIdParam } from '#platform';

/** The OpenAPI text of the alerts routes (alerts.controller.ts), kept out of the controller. */

export const ALERT_ID = objectIdParam('id', 'Alert rule id');

export const ALERT_DOCS = {
  list: 'Any role. Newest first; filter by `state` and `isActive`; limit default 50, max 100.',
  create:
    'Owner, admin or member. Starts in state `ok`; evaluated at the next tick of the scheduler (every ' +
    '`ALERT_INTERVAL_MS`), then every interval. A change ok → firing or back notifies each integration once, ' +
    'writes the audit entry and publishes the event `alert.triggered` or `alert.resolved`. At most 100 rules per ' +
    'organization (409). Unknown `agentId` or `integrationIds`: 400. Writes `alert.create`.',
  get: 'Any role.',
  history:
    'Any role. Each ok ↔ firing change with the value measured; newest first; limit default 50, max 100.',
  update:
    'Owner, admin, or the member who created it. A change of what is measured is evaluated at the next tick; ' +
    '`isActive: false` stops evaluation and rests the state at ok without a notification. Writes `alert.update`.',
  remove: 'The owner only (the role table). Its history is kept for digests. Writes `alert.delete`.',
} as const;
