import { Controller, Get, Logger, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Endpoint, RawResponse, ReqMeta, type RequestMeta } from '#platform';
import { AuthErrorCode } from '../auth/auth.errors.js';
import { AUTH_COOKIE_PATH, SignInHandOff } from './sign-in-hand-off.js';
import {
  RETURN_QUERY,
  SOCIAL_LOGIN_DOCS as DOCS,
  SOCIAL_LOGIN_RESPONSES as RESPONSES,
} from './social-login.docs.js';
import { readCookie } from './sso-cookies.js';
import { SOCIAL_STATE_TTL_MS, SocialFailure, SocialLoginService } from './social-login.service.js';

export const SOCIAL_STATE_COOKIE = 'svc_oauth_state';

/**
 * Social login's browser routes (docs/identity-administrators.md, "Social login"): one start and one return per
 * provider.
 */
@ApiTags('Auth')
@Controller('auth')
export class SocialLoginController {
  private readonly logger = new Logger('SocialLogin');

  constructor(
    private readonly social: SocialLoginService,
    private readonly handOff: SignInHandOff,
  ) {}

  private async start(provider: string, reply: FastifyReply) {
    const { url, cookie } = await this.social.start(provider);
    return reply
      .header(
        'set-cookie',
        this.handOff.cookie(SOCIAL_STATE_COOKIE, cookie, AUTH_COOKIE_PATH, SOCIAL_STATE_TTL_MS / 1000),
      )
      .redirect(url, 302);
  }

  private async finish(provider: string, request: FastifyRequest, reply: FastifyReply, meta: RequestMeta) {
    this.social.provider(provider); // 404 when not configured, before anything else
    const clearState = this.handOff.cookie(SOCIAL_STATE_COOKIE, '', AUTH_COOKIE_PATH, 0);
    try {
      const outcome = await this.social.callback(
        provider,
        (request.query ?? {}) as Record<string, unknown>,
        readCookie(request.headers.cookie, SOCIAL_STATE_COOKIE),
        meta,
      );
      return this.handOff.succeed(reply, outcome, clearState);
    } catch (err) {
      // A refused sign-in (or an account refused by login rules: deactivated, organization deleted).
      if (!(err instanceof SocialFailure) && !(err instanceof Error && 'status' in err)) throw err;
      this.logger.warn({ provider, reason: err.message }, 'Social sign-in refused');
      const ssoRequired = err instanceof AppError && err.code === AuthErrorCode.SSO_REQUIRED;
      return this.handOff.fail(reply, clearState, ssoRequired ? 'sso_required' : 'oauth_failed');
    }
  }

  @Get('github')
  @RawResponse()
  @Endpoint({
    summary: 'Sign in with GitHub',
    description: DOCS.github,
    access: 'public',
    responses: RESPONSES.github,
    errors: [404],
  })
  github(@Res() reply: FastifyReply) {
    return this.start('github', reply);
  }

  @Get('github/callback')
  @RawResponse()
  @Endpoint({
    summary: 'GitHub’s return (browser redirect)',
    description: DOCS.callback,
    access: 'public',
    query: RETURN_QUERY,
    responses: RESPONSES.callback,
    errors: [404],
  })
  githubCallback(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @ReqMeta() meta: RequestMeta) {
    return this.finish('github', request, reply, meta);
  }

  @Get('google')
  @RawResponse()
  @Endpoint({
    summary: 'Sign in with Google',
    description: DOCS.google,
    access: 'public',
    responses: RESPONSES.google,
    errors: [404],
  })
  google(@Res() reply: FastifyReply) {
    return this.start('google', reply);
  }

  @Get('google/callback')
  @RawResponse()
  @Endpoint({
    summary: 'Google’s return (browser redirect)',
    description: DOCS.callback,
    access: 'public',
    query: RETURN_QUERY,
    responses: RESPONSES.callback,
    errors: [404],
  })
  googleCallback(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @ReqMeta() meta: RequestMeta) {
    return this.finish('google', request, reply, meta);
  }

  @Get('microsoft')
  @RawResponse()
  @Endpoint({
    summary: 'Sign in with Microsoft',
    description: DOCS.microsoft,
    access: 'public',
    responses: RESPONSES.microsoft,
    errors: [404],
  })
  microsoft(@Res() reply: FastifyReply) {
    return this.start('microsoft', reply);
  }

  @Get('microsoft/callback')
  @RawResponse()
  @Endpoint({
    summary: 'Microsoft’s return (browser redirect)',
    description: DOCS.callback,
    access: 'public',
    query: RETURN_QUERY,
    responses: RESPONSES.callback,
    errors: [404],
  })
  microsoftCallback(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @ReqMeta() meta: RequestMeta,
  ) {
    return this.finish('microsoft', request, reply, meta);
  }
}
