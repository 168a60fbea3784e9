import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onResponseHookHandler,
  RouteOptions,
} from 'fastify';
import type { Counter, Histogram } from 'prom-client';
import { knownErrorCodes } from '../http/app-error.js';
import { notedErrorCode } from './error-answers.js';
import type { Metrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Counted in the in-flight gauge and not yet taken out of it (once, whether it completes or is aborted). */
    metricsInFlight: boolean;
  }
}

/** The route label of a request no route matched: never its path, which the client chooses. */
export const UNMATCHED_ROUTE = 'unmatched';

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
/** Methods kept as they are in the label; any other one (the parser knows about thirty) is `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** The first `"code":"…"` of a JSON error body is its envelope's code (the message before it is a quoted string). */
const CODE_IN_BODY = /"code":"([A-Z][A-Z0-9_]{0,63})"/;
const SCIM_PREFIX = '/scim/v2/';

export type ScimOperation =
  'create' | 'replace' | 'patch' | 'delete' | 'get' | 'list' | 'groups' | 'discovery';

const USER_WRITES: Record<string, ScimOperation> = { PUT: 'replace', PATCH: 'patch', DELETE: 'delete' };

/** The SCIM operation a route and method serve, or undefined for a route outside SCIM. */
export function scimOperation(route: string, method: string): ScimOperation | undefined {
  if (!route.startsWith(SCIM_PREFIX)) return undefined;
  const resource = route.slice(SCIM_PREFIX.length);
  const read = method === 'GET' || method === 'HEAD';
  if (resource === 'Users') return read ? 'list' : method === 'POST' ? 'create' : undefined;
  if (resource === 'Users/:id') return read ? 'get' : USER_WRITES[method];
  if (resource === 'Groups' || resource.startsWith('Groups/')) return 'groups';
  return 'discovery';
}

function statusClass(status: number): number {
  return Math.min(4, Math.max(0, Math.floor(status / 100) - 1));
}

interface Observer {
  observe(value: number): void;
}
interface Incrementer {
  inc(value?: number): void;
}

/** One route and method: its histogram (and SCIM counter) children by status class, each made on first use. */
class RouteSeries {
  private readonly durations: (Observer | undefined)[] = [
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ];
  private readonly scimRequests: (Incrementer | undefined)[] = [
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ];
  private readonly scim: ScimOperation | undefined;

  constructor(
    private readonly metrics: HttpMetrics,
    private readonly method: string,
    private readonly route: string,
  ) {
    this.scim = scimOperation(route, method);
  }

  completed(status: number, seconds: number): void {
    const i = statusClass(status);
    (this.durations[i] ??= this.metrics.duration.labels(this.method, this.route, STATUS_CLASSES[i]!)).observe(
      seconds,
    );
    if (this.scim !== undefined) {
      (this.scimRequests[i] ??= this.metrics.scimRequests.labels(this.scim, STATUS_CLASSES[i]!)).inc();
    }
  }
}

/**
 * The HTTP metrics of one application: request durations by method, route template and status class, requests in
 * flight, error answers by status and code, and SCIM requests by operation. Label values are the router's templates
 * and closed sets, never a path, id or organization.
 *
 * Cheap per request: each route gets its own onResponse hook holding its series (no lookup by path, no
 * `request.routeOptions`, which builds an object per read); children are made once per label set; the in-flight
 * count is a plain number the gauge reads at scrape time; error answers alone pay for their code.
 */
export class HttpMetrics {
  readonly duration: Histogram<'method' | 'route' | 'status_class'>;
  readonly scimRequests: Counter<'operation' | 'status_class'>;
  private readonly refusals: Counter<'status' | 'code'>;
  private readonly refusalChildren = new Map<number, Map<string, Incrementer>>();
  /** Unmatched requests' series, by the method as received. */
  private readonly unmatched = new Map<string, RouteSeries>();
  private inFlight = 0;
  private knownCodes: ReadonlySet<string> | undefined;

  constructor(metrics: Metrics) {
    this.duration = metrics.histogram({
      name: 'governance_http_request_duration_seconds',
      help: 'HTTP requests, from arrival to the response sent, by method, route template and status class.',
      labelNames: ['method', 'route', 'status_class'],
    });
    const requests = () => this.inFlight;
    metrics.gauge({
      name: 'governance_http_requests_in_flight',
      help: 'HTTP requests being served.',
      collect() {
        this.set(requests());
      },
    });
    this.refusals = metrics.counter({
      name: 'governance_http_refusals_total',
      help: 'HTTP error answers (4xx and 5xx), by status and error code.',
      labelNames: ['status', 'code'],
    });
    this.scimRequests = metrics.counter({
      name: 'governance_scim_requests_total',
      help: 'SCIM requests, by operation and status class.',
      labelNames: ['operation', 'status_class'],
    });
  }

  /**
   * The hooks on the Fastify instance, before its routes are registered (Nest registers them at init): each route's
   * own observer, and the count of error answers as they are sent. The caller adds `arrived`, `completed` and
   * `aborted` to its own request hooks.
   */
  install(instance: FastifyInstance): void {
    instance.decorateRequest('metricsInFlight', false);
    instance.addHook('onRoute', (route) => this.observeRoute(route));
    instance.addHook('onSend', (_request, reply, payload, done) => {
      if (reply.statusCode >= 400)
        this.refused(reply.statusCode, notedErrorCode(reply) ?? this.codeInBody(payload));
      done(null, payload);
    });
  }

  /** A request arrived (first onRequest hook). */
  arrived(request: FastifyRequest): void {
    request.metricsInFlight = true;
    this.inFlight += 1;
  }

  /** A request's response was sent (onResponse); matched routes record their duration in their own hook. */
  completed(request: FastifyRequest, reply: FastifyReply): void {
    this.left(request);
    if (request.is404)
      this.unmatchedSeries(request.method).completed(reply.statusCode, reply.elapsedTime / 1000);
  }

  /** The client went away before the answer was complete (onRequestAbort): no duration, no status. */
  aborted(request: FastifyRequest): void {
    this.left(request);
  }

  /** An error answer, by its status and error code (`unknown` when its body names none). */
  refused(status: number, code: string): void {
    let byCode = this.refusalChildren.get(status);
    if (!byCode) this.refusalChildren.set(status, (byCode = new Map()));
    let child = byCode.get(code);
    if (!child) byCode.set(code, (child = this.refusals.labels(String(status), code)));
    child.inc();
  }

  private left(request: FastifyRequest): void {
    if (!request.metricsInFlight) return;
    request.metricsInFlight = false;
    this.inFlight -= 1;
  }

  private unmatchedSeries(method: string): RouteSeries {
    let series = this.unmatched.get(method);
    if (!series) {
      series = new RouteSeries(this, METHODS.has(method) ? method : 'other', UNMATCHED_ROUTE);
      this.unmatched.set(method, series);
    }
    return series;
  }

  private observeRoute(route: RouteOptions): void {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const series = new Map(
      methods.map((m) => [m, new RouteSeries(this, METHODS.has(m) ? m : 'other', route.url)]),
    );
    const only = series.size === 1 ? series.values().next().value : undefined;
    const observe: onResponseHookHandler = (request, reply, done) => {
      (only ?? series.get(request.method))?.completed(reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    // A new array: a GET route's automatic HEAD route starts from a shallow copy of these options.
    const own = route.onResponse;
    route.onResponse = own === undefined ? [observe] : [...(Array.isArray(own) ? own : [own]), observe];
  }

  /** The code of an error body no renderer noted; read once needed, when every module has declared its codes. */
  private codeInBody(payload: unknown): string {
    return errorCodeInBody(payload, (this.knownCodes ??= new Set(knownErrorCodes())));
  }
}

/**
 * The error code of an error body, when it is one of the service's codes (`known`), `unknown` otherwise: a body can
 * be anything a handler or a plugin sent, with a value a client chose echoed in it, and a label taken from it must
 * stay in a closed set.
 */
export function errorCodeInBody(payload: unknown, known: ReadonlySet<string>): string {
  const code = typeof payload === 'string' ? CODE_IN_BODY.exec(payload)?.[1] : undefined;
  return code !== undefined && known.has(code) ? code : 'unknown';
}
