import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  APP_CONFIG,
  type AppConfig,
  AppError,
  ErrorCode,
  planHasFeature,
  type RateLimitDecision,
  RateLimitService,
} from '#platform';
import { type ScimPrincipal, ScimTokensService } from './scim-tokens.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The organization a SCIM request acts for (set by ScimAuthGuard). */
    scim?: ScimPrincipal;
  }
}

const unauthorized = (message: string) =>
  new AppError(401, ErrorCode.UNAUTHORIZED, message, {
    headers: { 'WWW-Authenticate': 'Bearer realm="scim"' },
  });

/**
 * The SCIM routes' authentication (they are public to the global guard, which knows JWTs and API keys only): the
 * per-IP limiter first (so that guessing tokens is bounded too), then the bearer token, the plan feature `scim`
 * (403 without scimType), then the per-token limiter. A refusal is rendered as a SCIM error. Every answer past the
 * per-IP limiter carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset of the tighter of the two windows
 * it was counted in, so that a provisioning client can slow down before it is refused.
 */
@Injectable()
export class ScimAuthGuard implements CanActivate {
  constructor(
    private readonly tokens: ScimTokensService,
    private readonly limiter: RateLimitService,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'scimRateLimit'>,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const byIp = await this.limit(reply, `scim-ip:${request.ip}`);
    const authorization = request.headers.authorization;
    const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
    if (!match) throw unauthorized('A SCIM bearer token is required');
    const principal = await this.tokens.resolve(match[1]!);
    if (!principal) throw unauthorized('Invalid SCIM token');
    if (!planHasFeature(principal.plan, 'scim')) {
      throw new AppError(
        403,
        ErrorCode.UPGRADE_REQUIRED,
        'Your plan does not include scim; upgrade to use it',
      );
    }
    await this.limit(reply, `scim-token:${principal.tokenId}`, byIp);
    request.scim = principal;
    return true;
  }

  /** Counts one request under `key`; the headers show it, or `tighter` when that one has fewer requests left. */
  private async limit(
    reply: FastifyReply,
    key: string,
    tighter?: RateLimitDecision,
  ): Promise<RateLimitDecision> {
    const decision = await this.limiter.check(key, this.config.scimRateLimit);
    const shown = tighter && tighter.remaining < decision.remaining ? tighter : decision;
    reply.headers({
      'RateLimit-Limit': String(shown.limit),
      'RateLimit-Remaining': String(shown.remaining),
      'RateLimit-Reset': String(shown.resetSeconds),
    });
    if (!decision.allowed) {
      throw new AppError(429, ErrorCode.RATE_LIMITED, 'Too many SCIM requests; try again later', {
        headers: { 'Retry-After': String(decision.resetSeconds) },
      });
    }
    return decision;
  }
}
