import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import helmet from '@fastify/helmet';
import cors from '@fastify/cors';
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { AppConfig } from '../config/app-config.js';
import { renderError } from './error-body.js';
import { API_PREFIX, rewriteLegacyUrl, VersioningService, type SchemaVersion } from './versioning.js';

declare module 'fastify' {
  interface FastifyRequest {
    schemaVersion?: SchemaVersion;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The Fastify adapter with the service's HTTP settings: body limit, proxy trust, request ids, legacy mount. */
export function createFastifyAdapter(config: AppConfig): FastifyAdapter {
  const options: FastifyServerOptions = {
    bodyLimit: config.bodyLimitBytes,
    // Fastify accepts a hop count at run time although its typings omit it.
    trustProxy: config.trustProxy as boolean | string[],
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // A well-formed incoming X-Request-Id is kept so that ids follow a request across services.
    genReqId: (req: IncomingMessage) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      (req as { id?: unknown }).id = id;
      return id;
    },
    rewriteUrl: (req) => rewriteLegacyUrl(req as IncomingMessage & { svcLegacy?: boolean }),
    logger: false,
  };
  return new FastifyAdapter(options);
}

function sendError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const rendered = renderError(err, request.id);
  for (const [name, value] of Object.entries(rendered.headers)) reply.header(name, value);
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

  await instance.register(helmet, {
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
    ],
    maxAge: 600,
  });

  instance.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    if (!request.url.startsWith('/api/')) return;
    reply.header('X-Svc-API-Version', 'v1');
    try {
      const headers: Record<string, string> = {};
      if ((request.raw as { svcLegacy?: boolean }).svcLegacy) Object.assign(headers, versioning.legacy());
      const applied = versioning.resolve(request.headers['x-svc-version']);
      Object.assign(headers, applied.headers);
      request.schemaVersion = applied.version;
      reply.header('X-Svc-Version', applied.version.version);
      for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    } catch (err) {
      return sendError(request, reply, err);
    }
  });

  app.setGlobalPrefix(API_PREFIX);
  app.enableShutdownHooks();
}
