import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorCode } from '../http/app-error.js';
import type { Actor, Credential } from './actor.js';
import { ACCESS_KEY, type AccessMetadata } from './access.decorator.js';
import { ApiKeyResolverRegistry, BEARER_RESOLVER, type BearerResolver } from './credential-resolvers.js';
import { RateLimitService } from './rate-limit.js';
import { planHasFeature } from './roles.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The global guard. Deny by default: a route without `@Access` or `@Public` is refused. Order of checks:
 * credentials (401), credential kind (403), plan feature (403 UPGRADE_REQUIRED), role (403), read-only key (403),
 * then the route's per-user limiter (429 RATE_LIMITED), so that refused requests do not use up the caller's window.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(BEARER_RESOLVER) private readonly bearer: BearerResolver,
    private readonly keys: ApiKeyResolverRegistry,
    private readonly limiter: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const meta = this.reflector.getAllAndOverride<AccessMetadata | undefined>(ACCESS_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!meta) throw AppError.forbidden('This route declares no access rule');
    if (meta.public) return true;

    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (meta.optional && !request.headers.authorization && !request.headers['x-api-key']) return true;
    const actor = await this.authenticate(request, meta.via ?? ['jwt']);

    if (meta.feature && !planHasFeature(actor.plan, meta.feature)) {
      throw new AppError(
        403,
        ErrorCode.UPGRADE_REQUIRED,
        `Your plan does not include ${meta.feature}; upgrade to use it`,
        {
          extra: { feature: meta.feature },
        },
      );
    }
    if (meta.roles && actor.credential === 'jwt' && (!actor.role || !meta.roles.includes(actor.role))) {
      throw AppError.forbidden();
    }
    const isWrite = meta.write ?? !READ_METHODS.has(request.method);
    if (isWrite && actor.credential === 'workspaceKey' && actor.scope?.readOnly) {
      throw AppError.forbidden('This API key is read-only');
    }
    if (isWrite && actor.deactivated && !meta.allowDeactivated) {
      throw new AppError(
        403,
        ErrorCode.ACCOUNT_DEACTIVATED,
        'Your membership was deactivated by your identity provider: this session can only read',
      );
    }
    if (meta.accountWide && actor.ssoScoped) {
      throw new AppError(
        403,
        ErrorCode.REAUTHENTICATION_REQUIRED,
        'This session was opened by an organization’s single sign-on and reaches that organization only; ' +
          'sign in with your own password or a magic link to change account-wide settings',
      );
    }
    if (meta.rateLimit) {
      // Per user: a key counts against its creator, so that several keys do not multiply a user's window.
      const subject = actor.userId ? `user:${actor.userId}` : `key:${actor.keyId}`;
      const decision = await this.limiter.checkUser(meta.rateLimit, subject);
      context
        .switchToHttp()
        .getResponse<FastifyReply>()
        .headers({
          'RateLimit-Limit': String(decision.limit),
          'RateLimit-Remaining': String(decision.remaining),
          'RateLimit-Reset': String(decision.resetSeconds),
        });
      if (!decision.allowed) {
        throw new AppError(429, ErrorCode.RATE_LIMITED, 'Too many requests; try again later', {
          headers: { 'Retry-After': String(decision.resetSeconds) },
        });
      }
    }
    request.actor = actor;
    return true;
  }

  private async authenticate(request: FastifyRequest, via: Credential[]): Promise<Actor> {
    const authorization = request.headers.authorization;
    const apiKey = request.headers['x-api-key'];
    if (typeof authorization === 'string' && authorization.length > 0) {
      const match = /^Bearer\s+(\S+)$/i.exec(authorization);
      if (!match) throw AppError.unauthorized('Malformed Authorization header; expected "Bearer <token>"');
      const actor = await this.bearer.resolveBearer(match[1]!);
      if (!via.includes('jwt')) throw AppError.forbidden('This route does not accept a user session');
      return actor;
    }
    if (typeof apiKey === 'string' && apiKey.length > 0) {
      const resolver = this.keys.find(apiKey);
      const actor = resolver ? await resolver.resolveKey(apiKey) : null;
      if (!actor) throw AppError.unauthorized('Invalid API key');
      if (!via.includes(actor.credential))
        throw AppError.forbidden('This route does not accept this kind of API key');
      return actor;
    }
    throw AppError.unauthorized();
  }
}
