/** The OpenAPI text of the system routes (system.controller.ts), kept out of the controller. */

export const SYSTEM_DOCS = {
  health:
    'Also served at `/health`. Answers within 100 ms when the service is not saturated; 503 SERVICE_UNAVAILABLE ' +
    '(with `checks`) when the database does not answer within 250 ms. A slow event loop (CPU-bound work) is reported as `checks.eventLoop: slow`, not as ' +
    'a database failure.',
  live:
    'Also served at `/health/live`. The liveness probe: 200 whenever the process can answer a request, whatever ' +
    'the state of the database (a replica is not restarted because PostgreSQL is away; readiness takes it out of ' +
    'rotation instead).',
  ready:
    'Also served at `/health/ready`. The readiness probe for a load balancer: 200 when the database answers within ' +
    '250 ms, holds every migration this build knows, and the process is not draining; 503 SERVICE_UNAVAILABLE with ' +
    '`checks` otherwise. From SIGTERM on it answers 503 while requests are still served for `SHUTDOWN_DRAIN_MS`, so ' +
    'that the balancer routes new requests elsewhere before the process closes.',
  versions:
    'Versions selectable with the `X-Svc-Version` request header, with status, sunset date and trace limits.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const SYSTEM_ERRORS = {
  health: { 503: 'SERVICE_UNAVAILABLE (database check failed)' },
  ready: { 503: 'SERVICE_UNAVAILABLE (database down, migrations pending, or draining)' },
} as const;
