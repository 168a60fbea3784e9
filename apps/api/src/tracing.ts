import { register as registerLoaderHooks } from 'node:module';
import type { IncomingMessage } from 'node:http';

/**
 * OpenTelemetry tracing of the service itself (docs/operators.md, "Tracing the service"). It is off unless the
 * standard OTEL_* variables ask for it; then the SDK starts here, before the application is loaded, so that its
 * instrumentations patch `http`, `fastify`, `pg` and `ioredis` as they load. Off, nothing of the SDK is loaded and
 * no loader hook is registered: the service runs exactly as without this file.
 *
 * The process's entry (main.ts of the API and of the worker) awaits `startTracing` and only then imports the
 * application: with static imports, the whole module graph would be loaded before the SDK could start.
 */

/** Requests that are not traced: health checks and scrapes, which would only be noise. */
const UNTRACED_PATHS = new Set(['/health', '/api/v1/health', '/metrics']);

/**
 * String literals: the escape-string form the pipelined transactions inline their values in (`E'…'`, quotes and
 * backslashes doubled, libs/platform/src/db/inline-sql.ts), and plain ones.
 */
const STRING_LITERAL = /\bE'(?:[^'\\]|\\.|'')*'|'(?:[^']|'')*'/g;
/** A run of placeholders (`?, ?, ?` of an inlined array or row) counts as one. */
const PLACEHOLDER_RUN = /\?(?:\s*,\s*\?)+/g;

/**
 * What a query's span records of its statement: its text with every string literal replaced by `?`. The pipelined
 * transactions inline their values (the trace writer's holds the traces' prompts and decisions, the audit entries'
 * addresses), and none of that may reach the tracing backend; a statement with parameters shows only `$n`.
 */
export function statementForSpan(text: string): string {
  return text.includes("'") ? text.replace(STRING_LITERAL, '?').replace(PLACEHOLDER_RUN, '?') : text;
}

const listOf = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '' && item !== 'null');

/**
 * Whether the OTEL_* variables ask for traces, read as the SDK reads them: not when OTEL_SDK_DISABLED is true; as
 * OTEL_TRACES_EXPORTER says when it is set (`none` first turns it off); otherwise when an OTLP endpoint is set. The
 * SDK alone would export to localhost:4318 by default: the service traces only when told where to.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  if (exporters.length > 0) return exporters[0] !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** The service name when the operator gives none (OTEL_SERVICE_NAME, or service.name in OTEL_RESOURCE_ATTRIBUTES). */
export function defaultServiceName(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const named =
    Boolean(env.OTEL_SERVICE_NAME?.trim()) ||
    listOf(env.OTEL_RESOURCE_ATTRIBUTES).some((pair) => pair.startsWith('service.name='));
  return named ? undefined : name;
}

/**
 * `pg` and `ioredis` are imported from ES modules, which only a loader hook can intercept (require-in-the-middle sees
 * `require` alone): import-in-the-middle's, limited to those two so that the rest of the module graph loads as usual.
 * In-thread where Node.js supports it, on the loader thread otherwise (Node.js 20).
 */
async function hookEsModules(): Promise<void> {
  const include = ['pg', 'ioredis'];
  const hooks = await import('import-in-the-middle/register-hooks.mjs');
  if (hooks.supportsSyncHooks()) hooks.register({ include });
  else registerLoaderHooks('import-in-the-middle/hook.mjs', import.meta.url, { data: { include } });
}

/**
 * Starts the SDK when the OTEL_* variables ask for tracing; resolves whether it did. Traces only: the service's
 * metrics are its Prometheus `/metrics`, its logs JSON lines on stdout (with the trace and span ids of a traced
 * request), so no metric reader or log exporter is set up whatever OTEL_METRICS_EXPORTER and OTEL_LOGS_EXPORTER say.
 */
export async function startTracing(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  if (!tracingRequested(env)) return false;
  await hookEsModules();
  const [{ NodeSDK }, { HttpInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }, fastify] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-ioredis'),
      import('@fastify/otel'),
    ]);
  const untraced = (path: string | undefined) => UNTRACED_PATHS.has(path?.split('?', 1)[0] ?? '');
  const sdk = new NodeSDK({
    serviceName: defaultServiceName(env, serviceName),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request: IncomingMessage) => untraced(request.url),
        // Outgoing requests are webhooks and integrations to third parties: their URLs may carry the receiver's
        // secret, and the receivers have no use for this service's trace context. The `webhook.send` span covers
        // a delivery.
        disableOutgoingRequestInstrumentation: true,
      }),
      // Through Fastify's initialization channel: the route's template (`http.route`) on the request's spans. No
      // span per hook or handler: one request span is enough, and each span costs on the ingestion path.
      new fastify.FastifyOtelInstrumentation({
        registerOnInitialization: true,
        instrumentHooks: false,
        instrumentHandler: false,
        ignorePaths: (route: { url?: string }) => untraced(route.url),
      }),
      // Queries outside a traced operation (the jobs' polling) would each be a trace of their own.
      new PgInstrumentation({
        requireParentSpan: true,
        requestHook: (span, { query, connection }) => {
          span.setAttribute('db.query.text', statementForSpan(query.text));
          // A pipelined transaction's text begins `BEGIN\n;\n…`: its span is named by its first word alone.
          const first = query.text.trimStart().split(' ', 1)[0]!;
          if (/\s/.test(first)) {
            span.updateName(
              `pg.query:${first.split(/[\s;]/, 1)[0]!.toUpperCase()} ${connection.database ?? ''}`.trim(),
            );
          }
        },
      }),
      // The command alone: a rate-limit key names a client.
      new IORedisInstrumentation({
        requireParentSpan: true,
        dbStatementSerializer: (command: string) => command,
      }),
    ],
  });
  sdk.start();
  return true;
}
