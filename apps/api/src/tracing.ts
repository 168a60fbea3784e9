import { register as registerLoaderHooks } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import {
  type Attributes,
  type Context,
  context,
  diag,
  isSpanContextValid,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  trace,
} from '@opentelemetry/api';
import type { tracing } from '@opentelemetry/sdk-node';
import type { FastifyRequest } from 'fastify';
// Three platform modules that import nothing heavy, by path: this file runs before the application, and #platform
// would load pg and fastify before the SDK could patch them.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- see above
import {
  decodeUnreservedInPath,
  redactUrl,
  SECRET_QUERY_PARAMS,
} from '../../../libs/platform/src/logging/url-redaction.js';
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- see above
import { PROBE_PATHS } from '../../../libs/platform/src/system/probe-paths.js';
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- see above
import { withholdErrorDetails } from '../../../libs/platform/src/tracing/span-errors.js';

/**
 * OpenTelemetry tracing of the service itself (docs/operators.md, "Tracing the service"). It is off unless the
 * standard OTEL_* variables ask for it; then the SDK starts here, before the application is loaded, so that its
 * instrumentations patch `http`, `fastify`, `pg` and `ioredis` as they load. Off, nothing of the SDK is loaded and
 * no loader hook is registered: the service runs exactly as without this file.
 *
 * The process's entry (main.ts of the API and of the worker) awaits `startTracing` and only then imports the
 * application: with static imports, the whole module graph would be loaded before the SDK could start.
 *
 * Spans leave the service for a tracing backend, so what they record is chosen here: URLs with their secrets masked
 * as in the log lines, no address or user agent a client sent, statements without their values, failures without
 * their messages (span-errors.ts), and a sampler that a client's `traceparent` cannot turn off.
 */

/** Requests that are not traced: health checks and scrapes, which would only be noise. */
const UNTRACED_PATHS = new Set([...PROBE_PATHS, '/metrics']);

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

/** A path the URL parser would leave as it is: segments of plain characters (no dot, percent sign or query). */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9_~-]+)*\/?$/;

/**
 * A request target's `url.path` and `url.query` as spans record them: parsed as the HTTP instrumentation parses it,
 * with the secrets the log lines mask masked the same way (redactUrl). `url.query` is undefined when there is none,
 * so that it replaces whatever an instrumentation would record. A plain path (most requests: `/api/v1/traces`) is
 * not parsed, since parsing would not change it.
 */
export function urlAttributesForSpan(target: string | undefined): Attributes {
  let path = target ?? '/';
  if (PLAIN_PATH.test(path)) return { 'url.path': redactUrl(path), 'url.query': undefined };
  let query = '';
  // As the service reads it (its rewriteUrl): `%41` is `A`, so that a token written with escapes is masked too.
  path = decodeUnreservedInPath(path);
  try {
    const url = new URL(path, 'http://localhost');
    path = url.pathname;
    query = url.search.slice(1);
  } catch {
    const at = path.indexOf('?');
    if (at >= 0) [path, query] = [path.slice(0, at), path.slice(at + 1)];
  }
  return {
    'url.path': redactUrl(path),
    'url.query': query === '' ? undefined : redactUrl(`?${query}`)!.slice(1),
  };
}

/** Each request's URL attributes, computed once for its HTTP span and reused by its Fastify span. */
const requestUrls = new WeakMap<IncomingMessage, Attributes>();

function urlAttributesOf(request: IncomingMessage): Attributes {
  let attributes = requestUrls.get(request);
  if (attributes === undefined) {
    attributes = urlAttributesForSpan(request.url);
    requestUrls.set(request, attributes);
  }
  return attributes;
}

/** A hook's work is for spans that are recorded: a request the sampler left out gets a span that records nothing. */
const whenRecording =
  <A extends unknown[]>(hook: (span: Span, ...args: A) => void) =>
  (span: Span, ...args: A): void => {
    if (span.isRecording()) hook(span, ...args);
  };

/**
 * What the HTTP server span records of a request, last (it replaces the instrumentation's own values): its URL with
 * the secrets masked, and nothing of who sent it: no client address read from `Forwarded` or `X-Forwarded-For`,
 * which any client may send (the Fastify request hook sets the one the service uses), no peer address or port, no
 * user agent.
 */
function incomingSpanAttributes(request: IncomingMessage): Attributes {
  return {
    ...urlAttributesOf(request),
    'client.address': undefined,
    'network.peer.address': undefined,
    'network.peer.port': undefined,
    'user_agent.original': undefined,
  };
}

/**
 * On the request's span of `@fastify/otel` (which records `url.path` as the raw URL, query included): the URL with its
 * secrets masked, and failures without their messages. On the HTTP server span, active here: `client.address` as the
 * service itself takes it, `request.ip`, which reads forwarding headers only when TRUST_PROXY says to.
 */
function fastifyRequestHook(span: Span, request: FastifyRequest): void {
  withholdErrorDetails(span);
  span.setAttributes(urlAttributesOf(request.raw));
  trace.getActiveSpan()?.setAttribute('client.address', request.ip);
}

type Samplers = typeof tracing;

/** OTEL_TRACES_SAMPLER_ARG as the SDK reads it: a ratio from 0 to 1, 1 when it is absent or out of range. */
function samplerRatio(env: NodeJS.ProcessEnv): number {
  const raw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = raw ? Number(raw) : Number.NaN;
  return ratio >= 0 && ratio <= 1 ? ratio : 1;
}

/**
 * The sampler: OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as the SDK reads them (parent-based, always on, by
 * default), except that a parent-based sampler does not obey a remote parent's "not sampled" flag: a request whose
 * `traceparent` ends `-00` is sampled as a request without one is, by the root sampler. A client could otherwise turn
 * the tracing of its requests off, and with them the batch its trace joined, other organizations' work included. A
 * remote parent that is sampled is followed (an operator's end-to-end traces).
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv, samplers: Samplers): tracing.Sampler {
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = samplers;
  const parentBased = (root: tracing.Sampler) =>
    new ParentBasedSampler({ root, remoteParentNotSampled: root });
  const name = env.OTEL_TRACES_SAMPLER?.trim() ? env.OTEL_TRACES_SAMPLER : undefined;
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(samplerRatio(env));
    case 'parentbased_always_off':
      return parentBased(new AlwaysOffSampler());
    case 'parentbased_traceidratio':
      return parentBased(new TraceIdRatioBasedSampler(samplerRatio(env)));
    case undefined:
    case 'parentbased_always_on':
      return parentBased(new AlwaysOnSampler());
    default:
      diag.error(`unknown OTEL_TRACES_SAMPLER value "${name}", using default`);
      return parentBased(new AlwaysOnSampler());
  }
}

/**
 * Sampling decided as a request arrives, before any instrumentation works on it. The SDK samples a span when it
 * starts it, after the HTTP and Fastify instrumentations have already built its attributes, bound the request's
 * and response's emitters to its context and wrapped its queries: a request the sampler then leaves out has paid
 * most of what a traced one does (bench:observability measured two thirds). Here the configured sampler (`inner`)
 * is asked first, in the HTTP instrumentation's ignore hook, with the request's propagated parent and a trace id
 * of its own: a request it leaves out is ignored by every instrumentation (tracing suppressed for it), and one it
 * takes is recorded, its server span sampled by `sampler` without asking `inner` again. Every other span (jobs,
 * the outbox) is sampled by `inner` as before. The same sampler, asked once, so the same share of requests.
 */
export class HeadSampling {
  /** The configured sampler's answer for the request `admits` let through, for its server span, started next. */
  private admitted: tracing.SamplingResult | undefined;
  private readonly recordAndSample: tracing.SamplingDecision;
  /**
   * Whether the decision is taken early: with a parent-based sampler (the default, and `parentbased_*`), whose
   * spans under the server span follow it. A sampler that judges every span by its trace id (`traceidratio`)
   * would judge the request's other spans again, on a trace id the early decision did not see: it keeps deciding
   * span by span, as the SDK does.
   */
  private readonly early: boolean;
  readonly sampler: tracing.Sampler;

  constructor(
    private readonly inner: tracing.Sampler,
    samplers: Samplers,
  ) {
    this.recordAndSample = samplers.SamplingDecision.RECORD_AND_SAMPLED;
    this.early = inner instanceof samplers.ParentBasedSampler;
    this.sampler = {
      shouldSample: (context: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]) => {
        const admitted = this.admitted;
        if (admitted !== undefined && kind === SpanKind.SERVER) {
          this.admitted = undefined;
          return admitted;
        }
        return this.inner.shouldSample(context, traceId, name, kind, attributes, links);
      },
      toString: () => `HeadSampling{${this.inner.toString()}}`,
    };
  }

  /** Whether a request with these headers is traced; when it is, its server span is sampled without asking again. */
  admits(headers: IncomingMessage['headers'], method: string | undefined): boolean {
    this.admitted = undefined;
    if (!this.early) return true;
    // Every configured propagator's headers (OTEL_PROPAGATORS: a `b3` parent is followed as a `traceparent` is).
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    // The span's own trace id when it continues a client's trace (a ratio then decides as upstream ones do);
    // otherwise the id is not drawn yet, and any random one decides with the same odds.
    const parentContext = trace.getSpanContext(parent);
    const traceId =
      parentContext && isSpanContextValid(parentContext) ? parentContext.traceId : randomUUID().replaceAll('-', '');
    const result = this.inner.shouldSample(parent, traceId, method ?? 'GET', SpanKind.SERVER, {}, []);
    if (result.decision !== this.recordAndSample) return false;
    this.admitted = result;
    return true;
  }
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
  const [
    { isTracingSuppressed },
    { NodeSDK, tracing },
    { HttpInstrumentation },
    { PgInstrumentation },
    { IORedisInstrumentation },
    fastify,
  ] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@fastify/otel'),
  ]);
  const untraced = (target: string | undefined) => {
    if (target === undefined) return false;
    const query = target.indexOf('?');
    return UNTRACED_PATHS.has(query < 0 ? target : target.slice(0, query));
  };
  const head = new HeadSampling(samplerFromEnv(env, tracing), tracing);
  const sdk = new NodeSDK({
    serviceName: defaultServiceName(env, serviceName),
    sampler: head.sampler,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request: IncomingMessage) =>
          untraced(request.url) || !head.admits(request.headers, request.method),
        startIncomingSpanHook: incomingSpanAttributes,
        requestHook: whenRecording(withholdErrorDetails),
        // The instrumentation's own masking of query values, by name: the same names (incomingSpanAttributes
        // replaces its result anyway).
        redactedQueryParams: [...SECRET_QUERY_PARAMS],
        redactedQueryParamsServer: [...SECRET_QUERY_PARAMS],
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
        // A request the HTTP layer left out (HeadSampling) is handled in a context with tracing suppressed: no
        // request span either, and then no query span, since pg's spans need a parent.
        ignorePaths: (route: { url?: string }) =>
          isTracingSuppressed(context.active()) || untraced(route.url),
        requestHook: whenRecording(fastifyRequestHook),
      }),
      // Queries outside a traced operation (the jobs' polling) would each be a trace of their own.
      new PgInstrumentation({
        requireParentSpan: true,
        requestHook: whenRecording((span, { query, connection }) => {
          withholdErrorDetails(span);
          span.setAttribute('db.query.text', statementForSpan(query.text));
          // A pipelined transaction's text begins `BEGIN\n;\n…`: its span is named by its first word alone.
          const first = query.text.trimStart().split(' ', 1)[0]!;
          if (/\s/.test(first)) {
            span.updateName(
              `pg.query:${first.split(/[\s;]/, 1)[0]!.toUpperCase()} ${connection.database ?? ''}`.trim(),
            );
          }
        }),
      }),
      // The command alone: a rate-limit key names a client.
      new IORedisInstrumentation({
        requireParentSpan: true,
        dbStatementSerializer: (command: string) => command,
        requestHook: whenRecording(withholdErrorDetails),
      }),
    ],
  });
  sdk.start();
  return true;
}
