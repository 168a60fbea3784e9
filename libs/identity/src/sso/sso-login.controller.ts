import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiEnvelope, ApiErrors, AppError, Public, RawResponse, ReqMeta, type RequestMeta } from '#platform';
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
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start SSO sign-in from an e-mail address',
    description:
      'Always 200 `{redirectUrl}`: for an e-mail of an SSO domain, the IdP’s authorization URL (OIDC: code flow ' +
      'with PKCE S256, state and nonce, with the cookie `svc_sso_binding` that ties the sign-in to this browser for ' +
      '10 minutes; SAML: the entry point carrying a deflated AuthnRequest on the HTTP-Redirect binding, with the ' +
      'cookie `svc_saml_binding` (`SameSite=None; Secure`, since the IdP posts back cross-site)); otherwise ' +
      '`APP_URL/login?sso=unavailable`. The answer depends on the domain only, never on ' +
      'whether an account exists. Call it with credentials, so that the browser keeps the cookie.',
  })
  @ApiEnvelope(SsoInitiateResultDto)
  @ApiErrors([400, 429])
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
  @Public()
  @RawResponse()
  @ApiOperation({
    summary: 'The OIDC IdP’s return (browser redirect)',
    description:
      'The redirect URI registered at the IdP. Takes the state once (it must come from this browser: the ' +
      '`svc_sso_binding` cookie), exchanges the code (PKCE) and checks the ID token (issuer, audience, expiry, ' +
      'nonce, signature; `none` refused), requires a verified e-mail of the organization’s SSO domains, and signs ' +
      'in a member or provisions an unknown e-mail (role from the mapping rules; an existing account that is not a ' +
      'member is refused). Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie, or, ' +
      'with `requireMfaEvenWithSso`, 302 to `APP_URL/login?ssoMfa=1` with `svc_sso_mfa`. Any failure: 302 to ' +
      '`APP_URL/login?error=sso_failed`, no session cookie. Writes `auth.login` with `metadata.method = "sso"`.',
  })
  @ApiQuery({ name: 'state', required: false, type: String })
  @ApiQuery({ name: 'code', required: false, type: String })
  @ApiResponse({ status: 302, description: 'To the dashboard: signed in, MFA next, or `error=sso_failed`.' })
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
      await this.signIns.recordFailure(err, meta);
      return this.handOff.fail(reply, clearBinding, 'sso_failed');
    }
  }

  @Get('oauth-token')
  @Public()
  @ApiOperation({
    summary: 'Take the session token a sign-in callback left in a cookie',
    description:
      'Answers `{token}` from the httpOnly `svc_oauth_token` cookie and clears it (once). No cookie: 401. The token ' +
      'never appears in a URL.',
  })
  @ApiEnvelope(OAuthTokenDto)
  @ApiErrors([401])
  oauthToken(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): OAuthTokenDto {
    const token = readCookie(request.headers.cookie, OAUTH_TOKEN_COOKIE);
    if (!token) throw AppError.unauthorized('No sign-in to collect');
    reply.header('set-cookie', this.handOff.cookie(OAUTH_TOKEN_COOKIE, '', AUTH_COOKIE_PATH, 0));
    return { token };
  }

  @Get('sso/mfa-exchange')
  @Public()
  @ApiOperation({
    summary: 'Take the MFA tempToken of an SSO sign-in',
    description:
      'With `requireMfaEvenWithSso`, the callback leaves a 5-minute tempToken in the httpOnly `svc_sso_mfa` cookie ' +
      'and sends the browser to `APP_URL/login?ssoMfa=1`. This answers `{tempToken}` and clears the cookie; post it ' +
      'with a TOTP code to `/auth/mfa/login`. No cookie: 401.',
  })
  @ApiEnvelope(SsoMfaExchangeDto)
  @ApiErrors([401])
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
