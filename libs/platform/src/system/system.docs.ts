/** The OpenAPI text of the system routes (system.controller.ts), kept out of the controller. */

export const SYSTEM_DOCS = {
  health:
    'Also served at `/health`. Answers within 100 ms when the service is not saturated; 503 SERVICE_UNAVAILABLE ' +
    '(with `checks`) when the database does not answer within 250 ms. A slow event loop (CPU-bound work) is reported as `checks.eventLoop: slow`, not as ' +
    'a database failure.',
  versions:
    'Versions selectable with the `X-Svc-Version` request header, with status, sunset date and trace limits.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const SYSTEM_ERRORS = {
  health: { 503: 'SERVICE_UNAVAILABLE (database check failed)' },
} as const;
