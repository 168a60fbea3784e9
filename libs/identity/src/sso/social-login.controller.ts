import { applyDecorators, Controller, Get, Logger, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors, AppError, Public, RawResponse, ReqMeta, type RequestMeta } from '#platform';
import { AuthErrorCode } from '../auth/auth.errors.js';
import { AUTH_COOKIE_PATH, SignInHandOff } from './sign-in-hand-off.js';
import { readCookie } from './sso-cookies.js';
import { SOCIAL_STATE_TTL_MS, SocialFailure, SocialLoginService } from './social-login.service.js';

export const SOCIAL_STATE_COOKIE = 'svc_oauth_state';

/** The decorators of a provider's start route. */
function StartRoute(provider: string, extra = ''): MethodDecorator {
  return applyDecorators(
    Public(),
    RawResponse(),
    ApiOperation({
      summary: `Sign in with ${provider}`,
      description:
        `Browser redirect (302) to ${provider}${extra}, with state and PKCE (S256) in the sealed httpOnly cookie ` +
        '`svc_oauth_state` (10 minutes). 404 when the provider is not configured.',
    }),
    ApiResponse({ status: 302, description: `To ${provider}.` }),
    ApiErrors([404]),
  );
}

/** The decorators of a provider's return route. */
function ReturnRoute(provider: string): MethodDecorator {
  return applyDecorators(
    Public(),
    RawResponse(),
    ApiOperation({
      summary: `${provider}’s return (browser redirect)`,
      description:
        'Checks the state against the cookie, exchanges the code (PKCE), takes the e-mail (GitHub: the primary ' +
        'verified address; Google: only when verified), and signs in the user with that e-mail or creates one with ' +
        'an organization. Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie (7 ' +
        'days; `Secure; SameSite=None` in production), collected by `GET /auth/oauth-token`; a user with TOTP goes ' +
        'to `APP_URL/login?ssoMfa=1` with `svc_sso_mfa`. Failure: 302 to `APP_URL/login?error=oauth_failed`, or ' +
        '`error=sso_required` when the organization of every membership enforces its SSO for the address. Writes ' +
        '`auth.login` with `metadata.method = "oauth"` and the provider. No token in any URL.',
    }),
    ApiQuery({ name: 'state', required: false, type: String }),
    ApiQuery({ name: 'code', required: false, type: String }),
    ApiResponse({
      status: 302,
      description: 'To the dashboard: signed in, MFA next, `error=oauth_failed` or `error=sso_required`.',
    }),
    ApiErrors([404]),
  );
}

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
  @StartRoute('GitHub', ' (scope `read:user user:email`)')
  github(@Res() reply: FastifyReply) {
    return this.start('github', reply);
  }

  @Get('github/callback')
  @ReturnRoute('GitHub')
  githubCallback(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @ReqMeta() meta: RequestMeta) {
    return this.finish('github', request, reply, meta);
  }

  @Get('google')
  @StartRoute('Google')
  google(@Res() reply: FastifyReply) {
    return this.start('google', reply);
  }

  @Get('google/callback')
  @ReturnRoute('Google')
  googleCallback(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @ReqMeta() meta: RequestMeta) {
    return this.finish('google', request, reply, meta);
  }

  @Get('microsoft')
  @StartRoute('Microsoft', ' (`prompt=select_account`)')
  microsoft(@Res() reply: FastifyReply) {
    return this.start('microsoft', reply);
  }

  @Get('microsoft/callback')
  @ReturnRoute('Microsoft')
  microsoftCallback(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @ReqMeta() meta: RequestMeta,
  ) {
    return this.finish('microsoft', request, reply, meta);
  }
}
