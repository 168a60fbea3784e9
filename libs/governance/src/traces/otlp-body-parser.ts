import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, ErrorCode } from '../../../platform/src/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Content-Type as the client sent it, on routes that read the raw body (OTLP). */
    otlpContentType?: string;
  }
}

/** Route config flag (`@RouteConfig(OTLP_RAW_BODY)`) of routes whose body is read as raw bytes. */
export const OTLP_RAW_BODY = { otlpRawBody: true } as const;
const RAW_MEDIA_TYPE = 'application/x-svc-otlp-raw';
/**
 * OTLP batches (up to 512 spans by default, GenAI spans carrying whole conversations) outgrow the 1 MiB JSON
 * limit; the decoder separately caps the inflated size at 8 MiB.
 */
export const OTLP_MAX_BODY_BYTES = 4 * 1024 * 1024;

const wantsRawBody = (request: FastifyRequest): boolean =>
  (request.routeOptions.config as { otlpRawBody?: boolean } | undefined)?.otlpRawBody === true;

/**
 * OTLP/HTTP bodies are JSON or protobuf, possibly gzip-compressed: the decoder needs the bytes as sent. The
 * global parsers stay JSON-only; for routes flagged with OTLP_RAW_BODY a preParsing hook keeps the client's
 * Content-Type aside and routes the body to a buffer parser that no other route accepts (others get 415).
 */
@Injectable()
export class OtlpBodyParser implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const instance = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!instance) return;
    instance.addHook('preParsing', async (request, _reply, payload) => {
      if (!wantsRawBody(request)) return payload;
      const contentType = request.headers['content-type'];
      request.otlpContentType = contentType ?? '';
      if (contentType !== undefined) request.headers['content-type'] = RAW_MEDIA_TYPE;
      return payload;
    });
    instance.addContentTypeParser(
      RAW_MEDIA_TYPE,
      { parseAs: 'buffer', bodyLimit: OTLP_MAX_BODY_BYTES },
      (request, body, done) => {
        if (!wantsRawBody(request)) {
          done(new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Unsupported Content-Type'), undefined);
          return;
        }
        done(null, body);
      },
    );
  }
}
