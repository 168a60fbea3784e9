import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG, type AppConfig, AppError, ErrorCode, planHasFeature, RateLimitService } from '#platform';
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
 * (403 without scimType), then the per-token limiter. A refusal is rendered as a SCIM error.
 */
@Injectable()
export class ScimAuthGuard implements CanActivate {
  constructor(
    private readonly tokens: ScimTokensService,
    private readonly limiter: RateLimitService,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'scimRateLimit'>,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    await this.limit(`scim-ip:${request.ip}`);
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
    await this.limit(`scim-token:${principal.tokenId}`);
    request.scim = principal;
    return true;
  }

  private async limit(key: string): Promise<void> {
    const decision = await this.limiter.check(key, this.config.scimRateLimit);
    if (!decision.allowed) {
      throw new AppError(429, ErrorCode.RATE_LIMITED, 'Too many SCIM requests; try again later', {
        headers: { 'Retry-After': String(decision.resetSeconds) },
      });
    }
  }
}
