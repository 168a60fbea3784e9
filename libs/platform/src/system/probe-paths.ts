/**
 * The probes' paths, at the root and under /api/v1 (docs/operators.md, "Readiness, liveness and the drain"): requests
 * a load balancer or an orchestrator sends every second or so, neither logged nor traced. Without imports: the tracing
 * entry loads it before the application.
 */
export const PROBE_PATHS: ReadonlySet<string> = new Set(
  ['/health', '/health/live', '/health/ready'].flatMap((path) => [path, `/api/v1${path}`]),
);
