import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Endpoint, RawResponse, ReqMeta, type RequestMeta } from '#platform';
import {
  OAuthTokenDto,
  SsoInitiateDto,
  SsoInitiateResultDto,
  SsoMfaExchangeDto,
} from './dto/sso-login.dto.js';
import {
  OAUTH_TOKEN_COOKIE,
  readCookie,
  samlBindingCookie,
  SSO_BINDING_COOKIE,
  SSO_MFA_COOKIE,
} from './sso-cookies.js';
import { SSO_STATE_TTL_MS, SsoLoginService } from './sso-login.service.js';
import { SsoFailure, SsoSignIn } from './sso-sign-in.js';
import { AUTH_COOKIE_PATH, SignInHandOff, SSO_COOKIE_PATH } from './sign-in-hand-off.js';
import { CODE, SSO_LOGIN_DOCS as DOCS, SSO_LOGIN_RESPONSES as RESPONSES, STATE } from './sso-login.docs.js';

/** The browser side of enterprise sign-in: the dispatcher, the IdP's return, and the cookie hand-offs. */
@ApiTags('Auth')
@Controller('auth')
export class SsoLoginController {
  constructor(
    private readonly sso: SsoLoginService,
    private readonly signIns: SsoSignIn,
    private readonly handOff: SignInHandOff,
  ) {}

  @Post('sso/initiate')
  @HttpCode(200)
  @Endpoint({
    summary: 'Start SSO sign-in from an e-mail address',
    description: DOCS.initiate,
    access: 'public',
    success: SsoInitiateResultDto,
    errors: [400, 429],
  })
  async initiate(
    @Body() dto: SsoInitiateDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SsoInitiateResultDto> {
    const { redirectUrl, binding, samlBinding } = await this.sso.initiate(dto.email);
    if (binding) {
      reply.header(
        'set-cookie',
        this.handOff.cookie(SSO_BINDING_COOKIE, binding, SSO_COOKIE_PATH, SSO_STATE_TTL_MS / 1000),
      );
    }
    if (samlBinding) reply.header('set-cookie', samlBindingCookie(samlBinding, SSO_STATE_TTL_MS / 1000));
    return { redirectUrl };
  }

  @Get('sso/callback')
  @RawResponse()
  @Endpoint({
    summary: 'The OIDC IdP’s return (browser redirect)',
    description: DOCS.callback,
    access: 'public',
    query: [STATE, CODE],
    responses: RESPONSES.callback,
  })
  async callback(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @ReqMeta() meta: RequestMeta) {
    const clearBinding = this.handOff.cookie(SSO_BINDING_COOKIE, '', SSO_COOKIE_PATH, 0);
    const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    try {
      const outcome = await this.sso.callback(
        (request.query ?? {}) as Record<string, unknown>,
        rawQuery,
        readCookie(request.headers.cookie, SSO_BINDING_COOKIE),
        meta,
      );
      return this.handOff.succeed(reply, outcome, clearBinding);
    } catch (err) {
      if (!(err instanceof SsoFailure)) throw err;
      await this.signIns.recordFailure(err, meta, 'oidc');
      return this.handOff.fail(reply, clearBinding, 'sso_failed');
    }
  }

  @Get('oauth-token')
  @Endpoint({
    summary: 'Take the session token a sign-in callback left in a cookie',
    description: DOCS.oauthToken,
    access: 'public',
    success: OAuthTokenDto,
    errors: [401],
  })
  oauthToken(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): OAuthTokenDto {
    const token = readCookie(request.headers.cookie, OAUTH_TOKEN_COOKIE);
    if (!token) throw AppError.unauthorized('No sign-in to collect');
    reply.header('set-cookie', this.handOff.cookie(OAUTH_TOKEN_COOKIE, '', AUTH_COOKIE_PATH, 0));
    return { token };
  }

  @Get('sso/mfa-exchange')
  @Endpoint({
    summary: 'Take the MFA tempToken of an SSO sign-in',
    description: DOCS.mfaExchange,
    access: 'public',
    success: SsoMfaExchangeDto,
    errors: [401],
  })
  mfaExchange(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): SsoMfaExchangeDto {
    const tempToken = readCookie(request.headers.cookie, SSO_MFA_COOKIE);
    if (!tempToken) throw AppError.unauthorized('No SSO sign-in awaiting MFA');
    reply.header('set-cookie', this.handOff.cookie(SSO_MFA_COOKIE, '', SSO_COOKIE_PATH, 0));
    return { tempToken };
  }
}
