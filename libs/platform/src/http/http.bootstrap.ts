import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type INestApplication, ShutdownSignal } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import helmet, { type HelmetOptions } from 'helmet';
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { AppConfig } from '../config/app-config.js';
import { AppError, ErrorCode } from './app-error.js';
import { registerBodyParsers } from './body-parser.js';
import { createClientErrorHandler } from './client-error.js';
import { renderError } from './error-body.js';
import { LINGER_MS, LingeringClose } from './lingering-close.js';
import { RequestLines } from './request-line.js';
import { isScimPath, SCIM_MEDIA_TYPE, scimErrorBody } from './scim-error.js';
import { RateLimitService } from '../security/rate-limit.js';
import { EventLoopMonitor } from '../system/event-loop.monitor.js';
import { drainOnSigterm } from '../system/drain-on-sigterm.js';
import { AppLogger } from '../logging/app-logger.js';
import { logRequestAborted, logRequestCompleted, requestContext } from '../logging/logging.js';
import { noteErrorCode } from '../metrics/error-answers.js';
import { HttpMetrics } from '../metrics/http-metrics.js';
import { bearerMatches, METRICS_PATH, metricsTokenDigest } from '../metrics/metrics-endpoint.js';
import { Metrics } from '../metrics/metrics.js';
import { API_PREFIX, rewriteLegacyUrl, VersioningService, type SchemaVersion } from './versioning.js';

declare module 'fastify' {
  interface FastifyRequest {
    schemaVersion?: SchemaVersion;
  }
}

const AUTH_PATH = /^\/api\/v1\/auth(\/|$)/;

/**
 * The path the router matched (its pattern), or for unmatched requests the percent-decoded path: the raw URL
 * would let `/api/v1/%61uth/login` reach the login handler without being counted by the auth limiter.
 */
function routedPath(request: FastifyRequest): string {
  const pattern = request.routeOptions?.url;
  if (pattern && pattern !== '*') return pattern;
  const raw = request.url.split('?')[0] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  crossOriginResourcePolicy: { policy: 'same-site' },
};

/**
 * Helmet's security headers for our configuration. They do not depend on the request (no CSP nonces), so they
 * are computed once, by running helmet against a recording response, instead of building helmet per request.
 */
function helmetHeaders(options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: unknown) => void (headers[name] = String(value)),
    removeHeader: (name: string) => void delete headers[name],
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => undefined);
  return Object.freeze(headers);
}

const SECURITY_HEADERS = helmetHeaders(HELMET_OPTIONS);

/** Headers that carry one value: a second copy is refused rather than one of them silently winning. */
const SINGLE_VALUED_HEADERS = new Set([
  'authorization',
  'x-api-key',
  'content-type',
  'content-encoding',
  'idempotency-key',
  'x-svc-version',
]);

/**
 * Node keeps the first Authorization header and drops the rest, and the access guard would take a bearer token
 * over an API key sent beside it: refuse the ambiguity instead, before anything reads the headers.
 */
function assertUnambiguousHeaders(rawHeaders: string[]): void {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!SINGLE_VALUED_HEADERS.has(name)) continue;
    if (seen.has(name)) {
      throw AppError.validation(`The ${name} header may be sent only once`, [
        { field: `headers.${name}`, message: `${name} must be sent once` },
      ]);
    }
    seen.add(name);
  }
  if (seen.has('authorization') && seen.has('x-api-key')) {
    throw AppError.validation(
      'Send one credential: an Authorization header or an X-API-Key header, not both',
      [{ field: 'headers.x-api-key', message: 'x-api-key must not be sent with authorization' }],
    );
  }
}

/**
 * TRUST_PROXY for Fastify. A hop count becomes a function trusting that many hops from the socket (proxy-addr's
 * meaning of a number): Fastify itself takes a bare number as "trust nothing", so every client behind the proxy
 * would share the proxy's address. With a count of 1, the client is the address the proxy appended last; whatever
 * the client wrote into X-Forwarded-For before it is ignored.
 */
export function trustProxyOption(
  trustProxy: AppConfig['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trustProxy === 'number') {
    const hops = trustProxy;
    return (_address: string, hop: number) => hop < hops;
  }
  return trustProxy;
}

/**
 * How connections end. Every connection's request line is measured across reads (a long URI is 414 however it
 * arrives; see RequestLines, which reads no socket data), and Node's closing of a connection after a response
 * lingers instead of destroying it (see LingeringClose). An error answered before the request's body arrived whole
 * (the access guard's 401 on a body nobody read, the body limit's 413, a 415) says `Connection: close`: the
 * connection then lingers, bounded, rather than reading a body of any size to keep the connection alive. No 'data'
 * listener is added to a connection: one would take Node's parser off its native read path for the connection's
 * life (measured: about 7 % fewer traces a second). When the server closes, idle connections end at once and a
 * request in flight is answered with `Connection: close`, so that the drain ends with the last answer.
 */
function manageConnections(
  instance: FastifyInstance,
  requestLines: RequestLines,
  closer: LingeringClose,
): void {
  instance.server.on('connection', (socket: Socket) => {
    requestLines.track(socket);
    closer.adopt(socket);
  });
  // Upgrades (WebSocket) are not 'request' events: their sockets are not measured once handed over.
  const rearm = function (this: ServerResponse) {
    requestLines.rearm(this.req.socket);
  };
  instance.server.on('request', (_req: IncomingMessage, res: ServerResponse) => res.once('finish', rearm));
  // Once the server is closing (SIGTERM), a request already in flight is answered, and its connection then closes:
  // without `Connection: close` it would stay open, kept alive, until the shutdown timeout killed the process.
  let closing = false;
  instance.addHook('onSend', (request, reply, payload, done) => {
    if (closing || (request.raw.complete === false && reply.statusCode >= 400))
      reply.header('Connection', 'close');
    done(null, payload);
  });
  instance.addHook('preClose', (done) => {
    closing = true;
    closer.destroyAll();
    done();
  });
}

/** Where the answers Node's parser refuses are counted, per server: the metrics exist only once the app does. */
interface ParserRefusals {
  count?: (status: number, code: string) => void;
}
const parserRefusals = new WeakMap<FastifyInstance, ParserRefusals>();

/**
 * The Fastify adapter with the service's HTTP settings: body limit, timeouts, proxy trust, request ids, legacy
 * mount, answers in the envelope for requests Node's parser refuses, and connections closed without a reset.
 */
export function createFastifyAdapter(config: AppConfig): FastifyAdapter {
  const timeouts = config.httpTimeouts;
  // What the client still sends after an early answer is drained up to one body's worth, or LINGER_MS.
  const requestLines = new RequestLines();
  const closer = new LingeringClose({ maxBytes: config.bodyLimitBytes, maxMs: LINGER_MS });
  const refusals: ParserRefusals = {};
  const options: FastifyServerOptions & { http: ServerOptions } = {
    bodyLimit: config.bodyLimitBytes,
    // A client that sends half a request, or only headers, is cut off instead of holding a socket forever.
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    // Node checks request timeouts on this interval (30 s by default, which would double a short timeout).
    http: {
      headersTimeout: timeouts.headersMs,
      connectionsCheckingInterval: Math.min(1000, timeouts.headersMs),
    },
    clientErrorHandler: createClientErrorHandler(SECURITY_HEADERS, {
      requestLines,
      closer,
      answered: (status, code) => refusals.count?.(status, code),
    }),
    trustProxy: trustProxyOption(config.trustProxy),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // A well-formed incoming X-Request-Id is kept so that ids follow a request across services.
    genReqId: (req: IncomingMessage) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      (req as { id?: unknown }).id = id;
      return id;
    },
    rewriteUrl: (req) => rewriteLegacyUrl(req as IncomingMessage & { svcLegacy?: boolean }),
    frameworkErrors: frameworkError,
    logger: false,
  };
  const adapter = new FastifyAdapter(options);
  manageConnections(adapter.getInstance(), requestLines, closer);
  parserRefusals.set(adapter.getInstance(), refusals);
  return adapter;
}

/**
 * Both versioning axes. Legacy-mount headers are set first so that they accompany any error; the legacy 410
 * comes after the schema version is resolved, so it carries the X-Svc-Version that would have applied.
 */
function applyVersioning(versioning: VersioningService, request: FastifyRequest, reply: FastifyReply): void {
  let legacyGone: unknown;
  if ((request.raw as { svcLegacy?: boolean }).svcLegacy) {
    try {
      reply.headers(versioning.legacy());
    } catch (err) {
      legacyGone = err;
    }
  }
  const applied = versioning.resolve(request.headers['x-svc-version']);
  request.schemaVersion = applied.version;
  reply.header('X-Svc-Version', applied.version.version);
  reply.headers(applied.headers);
  if (legacyGone) throw legacyGone;
}

/** Errors the router raises before any hook runs (bad percent-encoding, over-long parameters). */
function frameworkError(error: { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  reply.headers({
    'X-Request-Id': request.id,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'SAMEORIGIN',
    'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
    'Referrer-Policy': 'no-referrer',
  });
  if (request.url.startsWith('/api/')) reply.header('X-Svc-API-Version', 'v1');
  void sendError(
    request,
    reply,
    tooLong
      ? new AppError(414, ErrorCode.URI_TOO_LONG, 'A path segment is too long')
      : AppError.validation('The URL is not validly percent-encoded'),
  );
}

/** Options for NestFactory.create: body parsing is ours (JSON only, see registerBodyParsers). */
export const HTTP_APP_OPTIONS = { bodyParser: false } as const;

function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const rendered = renderError(err, request.id);
  noteErrorCode(reply, rendered.body.code);
  for (const [name, value] of Object.entries(rendered.headers)) reply.header(name, value);
  if (isScimPath(request.url)) {
    return reply
      .status(rendered.status)
      .type(SCIM_MEDIA_TYPE)
      .send(scimErrorBody(rendered.status, err, rendered.body.error));
  }
  return reply.status(rendered.status).type('application/json; charset=utf-8').send(rendered.body);
}

/**
 * Everything the HTTP service needs beyond its modules: security headers, CORS, the `/api/v1` prefix, and the
 * hook that applies both versioning axes before routing so that every response (errors and 404s included)
 * carries the version headers. Called by main.ts and by the end-to-end tests, so both run the same stack.
 */
export async function configureHttpApp(app: INestApplication, config: AppConfig): Promise<void> {
  const fastifyApp = app as NestFastifyApplication;
  const instance = fastifyApp.getHttpAdapter().getInstance();
  const versioning = app.get(VersioningService);

  const limiter = app.get(RateLimitService);
  const logger = app.get(AppLogger).pino;
  const metrics = app.get(Metrics);
  // Before any route is registered (Nest registers them at init): each route gets its own duration observer.
  // METRICS=off installs no hook at all.
  const http = metrics.enabled ? new HttpMetrics(metrics) : undefined;
  http?.install(instance);
  const parser = parserRefusals.get(instance);
  if (parser && http) parser.count = (status, code) => http.refused(status, code);
  // Log lines written while a request is served carry its id. The context is entered as the request arrives,
  // synchronously and before any asynchronous hook, so that it holds for the connection's context in which the
  // body is then read and the handler runs (entering it again in a later hook does not reach the handler; the
  // request-logging test shows both).
  instance.addHook('onRequest', (request, _reply, done) => {
    requestContext.enterWith(request.id);
    http?.arrived(request);
    done();
  });
  instance.addHook('onResponse', (request, reply, done) => {
    logRequestCompleted(logger, request, reply.statusCode, reply.elapsedTime);
    http?.completed(request, reply);
    done();
  });
  instance.addHook('onRequestAbort', (request, done) => {
    logRequestAborted(logger, request);
    http?.aborted(request);
    done();
  });
  // Before CORS, whose hook answers preflights itself: every response carries the request id.
  instance.addHook('onRequest', async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    reply.header('X-Request-Id', request.id);
    if (isScimPath(request.url)) {
      // SCIM is outside the versioned API, but a credential sent twice is as ambiguous there.
      try {
        assertUnambiguousHeaders(request.raw.rawHeaders);
      } catch (err) {
        return sendError(request, reply, err);
      }
      return;
    }
    if (!request.url.startsWith('/api/')) return;
    reply.header('X-Svc-API-Version', 'v1');
    try {
      assertUnambiguousHeaders(request.raw.rawHeaders);
      // The auth limiter counts before authentication and validation, so its 429 takes precedence.
      if (request.method !== 'OPTIONS' && AUTH_PATH.test(routedPath(request))) {
        const decision = await limiter.checkAuth(request.ip);
        reply.headers({
          'RateLimit-Limit': String(decision.limit),
          'RateLimit-Remaining': String(decision.remaining),
          'RateLimit-Reset': String(decision.resetSeconds),
        });
        if (!decision.allowed) {
          throw new AppError(
            429,
            ErrorCode.RATE_LIMIT_EXCEEDED,
            'Too many authentication requests; try again later',
            {
              headers: { 'Retry-After': String(decision.resetSeconds) },
            },
          );
        }
      }
      applyVersioning(versioning, request, reply);
    } catch (err) {
      return sendError(request, reply, err);
    }
  });
  await instance.register(cors, {
    origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
    credentials: !config.corsOrigins.includes('*'),
    exposedHeaders: [
      'X-Request-Id',
      'X-Svc-Version',
      'X-Svc-API-Version',
      'Deprecation',
      'Sunset',
      'Link',
      'Retry-After',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
    ],
    maxAge: 600,
  });

  registerBodyParsers(instance, { shape: config.bodyShape, maxInflateRatio: config.bodyMaxInflateRatio });
  if (config.metrics.token) serveMetricsBehindToken(instance, metrics, config.metrics.token);

  // SCIM lives at the host root (/scim/v2), outside the versioned API.
  app.setGlobalPrefix(API_PREFIX, { exclude: ['scim/v2/*path'] });
  // SIGTERM drains first (readiness false, requests still served), then closes; the other signals close at once.
  app.enableShutdownHooks(
    Object.values(ShutdownSignal).filter((signal) => signal !== ShutdownSignal.SIGTERM),
  );
  drainOnSigterm(app, config.shutdownDrainMs, logger);

  // The health check's event-loop delay counts from when the server is ready to listen (or, in tests, to be
  // injected): the blocking work of start-up before it (migrations, module initialisation) is not load.
  const eventLoop = app.get(EventLoopMonitor);
  instance.addHook('onReady', async () => eventLoop.start());
}

/**
 * `GET /metrics` on the main port, for `Authorization: Bearer <METRICS_TOKEN>` only (compared in constant time);
 * anything else is 401 UNAUTHORIZED in the envelope, never a metric. A Fastify route rather than a controller: an
 * operator's endpoint in the Prometheus text format, outside the API and its OpenAPI document (docs/operators.md,
 * "Metrics").
 */
function serveMetricsBehindToken(instance: FastifyInstance, metrics: Metrics, token: string): void {
  const expected = metricsTokenDigest(token);
  instance.get(METRICS_PATH, { exposeHeadRoute: false }, async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, expected)) {
      reply.header('WWW-Authenticate', 'Bearer realm="metrics"');
      return sendError(request, reply, AppError.unauthorized('A valid metrics token is required'));
    }
    const text = await metrics.text();
    return reply.header('Cache-Control', 'no-store').type(metrics.contentType).send(text);
  });
}
