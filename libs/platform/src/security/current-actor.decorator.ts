import { isIP } from 'node:net';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Actor, RequestMeta } from './actor.js';

declare module 'fastify' {
  interface FastifyRequest {
    actor?: Actor;
  }
}

/** The caller resolved by the guard. Fails loudly when used on a route no guard populated. */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const request = ctx.switchToHttp().getRequest<FastifyRequest>();
  if (!request.actor) throw new Error('@CurrentActor() used on a route without an authenticated actor');
  return request.actor;
});

/** The caller on a route whose credentials are optional (`@Access({ optional: true })`): undefined without any. */
export const OptionalActor = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Actor | undefined =>
    ctx.switchToHttp().getRequest<FastifyRequest>().actor,
);

export function requestMeta(request: FastifyRequest): RequestMeta {
  const ua = request.headers['user-agent'];
  // With TRUST_PROXY the address comes from X-Forwarded-For: keep it only if it is an address.
  const ip = request.ip && isIP(request.ip) ? request.ip : null;
  return { ip, userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null };
}

/** IP and user agent of the request, for audit entries. */
export const ReqMeta = createParamDecorator((_: unknown, ctx: ExecutionContext): RequestMeta =>
  requestMeta(ctx.switchToHttp().getRequest<FastifyRequest>()),
);
