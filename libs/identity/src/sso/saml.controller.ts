import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  AppError,
  CurrentActor,
  objectIdParam,
  Public,
  RawBodyRoute,
  RawResponse,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { SamlInitiateDto, SamlRedirectDto } from './dto/sso-login.dto.js';
import { SamlLoginService } from './saml-login.service.js';
import { SamlLogoutService, SamlRefusal } from './saml-logout.service.js';
import { SAML_REQUEST_TTL_MS } from './saml-service-provider.js';
import { readCookie, SAML_BINDING_COOKIE, samlBindingCookie } from './sso-cookies.js';
import { SignInHandOff } from './sign-in-hand-off.js';
import { SsoFailure, SsoSignIn } from './sso-sign-in.js';
import { SsoErrorCode } from './sso.errors.js';

/**
 * The SAML form posts (the ACS, the logout callback) may carry this much: 5 MB, then 413 (test/sso-saml.e2e-spec.ts).
 */
const SAML_FORM_MAX_BYTES = 5 * 1024 * 1024;
const FORM_TYPE = 'application/x-www-form-urlencoded';

/** What the public routes taking an organization id answer when it does not sign in with SAML. */
const NO_SAML =
  'Any organization that does not sign in with SAML now (unknown, malformed id, deleted, without SSO, on a plan ' +
  'without `sso`, or with OIDC) gets one and the same 404, and no sooner than 40 ms, so that a stranger cannot ' +
  'tell these cases apart.';
const NO_SAML_ERROR = 'NOT_FOUND, the same body whatever the reason';

const SAML_FORM_SCHEMA = {
  type: 'object' as const,
  properties: {
    SAMLResponse: { type: 'string' as const, description: 'The base64 SAML message.' },
    SAMLRequest: { type: 'string' as const, description: 'An IdP-initiated LogoutRequest (logout only).' },
    RelayState: { type: 'string' as const },
  },
};

/** The body of a SAML HTTP-POST binding, or undefined when it is not a form. */
function formOf(request: FastifyRequest, body: Buffer | undefined): URLSearchParams | undefined {
  const type = (request.rawContentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== FORM_TYPE || !body) return undefined;
  return new URLSearchParams(body.toString('latin1'));
}

/**
 * SAML single sign-on and single logout (docs/identity-administrators.md,
 * "Single sign-on: SAML sign-in and single logout"), and the service provider's metadata.
 */
@ApiTags('Auth')
@Controller('auth/saml')
export class SamlController {
  constructor(
    private readonly saml: SamlLoginService,
    private readonly logout: SamlLogoutService,
    private readonly signIns: SsoSignIn,
    private readonly handOff: SignInHandOff,
  ) {}

  @Post('initiate')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start SAML sign-in for an organization',
    description:
      '`{redirectUrl}`: the organization’s IdP entry point carrying a deflated AuthnRequest (HTTP-Redirect binding, ' +
      'signed in the query when `SAML_SP_SIGNING_KEY` is set). Its id is kept 10 minutes; the response must answer ' +
      'it, from this browser: the cookie `svc_saml_binding` (httpOnly, `SameSite=None; Secure`, 10 minutes) ties ' +
      `them. Call it with credentials. ${NO_SAML}`,
  })
  @ApiEnvelope(SamlRedirectDto)
  @ApiErrors([400, 404, 429], { 404: NO_SAML_ERROR })
  async initiate(
    @Body() dto: SamlInitiateDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SamlRedirectDto> {
    const { redirectUrl, binding } = await this.saml.initiate(dto.organizationId);
    reply.header('set-cookie', samlBindingCookie(binding, SAML_REQUEST_TTL_MS / 1000));
    return { redirectUrl };
  }

  @Post('callback')
  @Public()
  @RawResponse()
  @RawBodyRoute(SAML_FORM_MAX_BYTES)
  @ApiOperation({
    summary: 'The assertion consumer service (HTTP-POST binding)',
    description:
      'The IdP posts `SAMLResponse` as a form (≤ 5 MB). Its InResponseTo must name an AuthnRequest of the ' +
      'organization sent within 10 minutes to this browser (the `svc_saml_binding` cookie), once. Required: a signed response or a signed assertion (the ' +
      'organization’s IdP certificate; signature wrapping refused), the audience (the SP entity id), the ' +
      'Destination and the bearer confirmation’s Recipient (this URL), the time window with a minute of skew, and ' +
      'an assertion id never accepted before. Encrypted assertions are decrypted when `SAML_SP_DECRYPTION_KEY` is ' +
      'set. The e-mail is the NameID in e-mail format or the `email` attribute; groups come from `groupsAttribute`. ' +
      'Success: 302 to `APP_URL/auth/callback` with the httpOnly `svc_oauth_token` cookie (or `APP_URL/login?' +
      'ssoMfa=1` with `svc_sso_mfa`); any failure: 302 to `APP_URL/login?error=sso_failed` and no cookie.',
  })
  @ApiConsumes(FORM_TYPE)
  @ApiBody({ schema: SAML_FORM_SCHEMA })
  @ApiResponse({ status: 302, description: 'To the dashboard: signed in, MFA next, or `error=sso_failed`.' })
  async callback(
    @Body() body: Buffer | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @ReqMeta() meta: RequestMeta,
  ) {
    try {
      const form = formOf(request, body);
      if (!form) throw new SsoFailure('not a form post');
      const binding = readCookie(request.headers.cookie, SAML_BINDING_COOKIE);
      const outcome = await this.saml.callback(form, binding, meta);
      return this.handOff.succeed(reply, outcome, samlBindingCookie('', 0));
    } catch (err) {
      if (!(err instanceof SsoFailure)) throw err;
      await this.signIns.recordFailure(err, meta);
      return this.handOff.fail(reply, samlBindingCookie('', 0), 'sso_failed');
    }
  }

  @Get('metadata/:orgId')
  @Public()
  @RawResponse()
  @ApiOperation({
    summary: 'The service provider metadata of an organization (XML)',
    description:
      'The SP entity id (this URL), the ACS (`/auth/saml/callback`, HTTP-POST), the single-logout service, the ' +
      'NameID format (e-mail), the signing certificate when `SAML_SP_SIGNING_KEY` is set, and an encryption key only ' +
      `when \`SAML_SP_DECRYPTION_KEY\` is set. ${NO_SAML}`,
  })
  @ApiParam(objectIdParam('orgId', 'Organization id'))
  @ApiProduces('application/samlmetadata+xml')
  @ApiResponse({
    status: 200,
    description: 'The EntityDescriptor.',
    content: { 'application/samlmetadata+xml': { schema: { type: 'string' } } },
  })
  @ApiErrors([404, 429], { 404: NO_SAML_ERROR })
  async metadata(@Param('orgId') orgId: string, @Res() reply: FastifyReply) {
    const xml = await this.saml.metadata(orgId);
    return reply.type('application/samlmetadata+xml; charset=utf-8').send(xml);
  }

  @Post('logout/initiate')
  @Access()
  @HttpCode(200)
  @ApiOperation({
    summary: 'SP-initiated single logout',
    description:
      'Revokes the caller’s session at once (`auth.logout`), then answers `{redirectUrl}`: the organization’s ' +
      '`saml.logoutUrl` with a LogoutRequest for the SAML session (signed when `SAML_SP_SIGNING_KEY` is set), or ' +
      '`APP_URL/login?logout=1` when the session was not opened by SAML or no logout URL is configured.',
  })
  @ApiEnvelope(SamlRedirectDto)
  @ApiErrors([401])
  logoutInitiate(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<SamlRedirectDto> {
    return this.logout.initiate(actor, meta);
  }

  @Get('logout/callback')
  @Public()
  @RawResponse()
  @ApiOperation({
    summary: 'Single-logout callback (HTTP-Redirect binding)',
    description:
      'The IdP’s LogoutResponse answering a LogoutRequest of this service, on the HTTP-Redirect binding (Entra ID ' +
      'answers SP-initiated logout so): `SAMLResponse` (deflated, base64), `RelayState` if any, `SigAlg` ' +
      '(RSA-SHA256, RSA-SHA384 or RSA-SHA512; SHA-1 refused) and `Signature`, which must verify over ' +
      '`SAMLResponse=…[&RelayState=…]&SigAlg=…` as sent, with the organization’s IdP certificate. Then as on the ' +
      'POST binding: its Destination is this URL, its status a success, its issuer `idpIssuer` when set, its ' +
      'InResponseTo a pending request, answered once → 302 to `APP_URL/login?logout=1`. An unsigned, wrongly ' +
      'signed, malformed (a parameter twice, not deflated, over 64 KB inflated) or unknown message answers 400 ' +
      'SAML_MESSAGE_INVALID; so does an IdP-initiated `SAMLRequest`, taken on the POST binding only.',
  })
  @ApiQuery({ name: 'SAMLResponse', required: true, type: String, description: 'Deflated, then base64.' })
  @ApiQuery({ name: 'RelayState', required: false, type: String })
  @ApiQuery({
    name: 'SigAlg',
    required: true,
    type: String,
    example: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  })
  @ApiQuery({ name: 'Signature', required: true, type: String, description: 'Base64.' })
  @ApiResponse({ status: 302, description: 'To the dashboard’s login page (`?logout=1`).' })
  @ApiErrors([400, 429], { 400: 'SAML_MESSAGE_INVALID: unsigned, wrongly signed, malformed or unknown' })
  async logoutRedirect(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const at = request.url.indexOf('?');
    const rawQuery = at < 0 ? '' : request.url.slice(at + 1);
    try {
      const { redirectUrl } = await this.logout.redirectCallback(rawQuery);
      return reply.redirect(redirectUrl, 302);
    } catch (err) {
      if (err instanceof SamlRefusal || err instanceof SsoFailure) throw invalidMessage(err.message);
      throw err;
    }
  }

  @Post('logout/callback')
  @Public()
  @RawResponse()
  @RawBodyRoute(SAML_FORM_MAX_BYTES)
  @ApiOperation({
    summary: 'Single-logout callback (HTTP-POST binding)',
    description:
      'Either the IdP’s signed `SAMLResponse` (a LogoutResponse answering a LogoutRequest of this service, once) → ' +
      '302 to `APP_URL/login?logout=1`; or an IdP-initiated signed `SAMLRequest` (LogoutRequest) → every session ' +
      'of that user in that organization revoked, then 302 to the IdP’s logout URL with a LogoutResponse. An ' +
      'unsigned, wrongly signed, malformed or unknown message answers 400 SAML_MESSAGE_INVALID.',
  })
  @ApiConsumes(FORM_TYPE)
  @ApiBody({ schema: SAML_FORM_SCHEMA })
  @ApiResponse({ status: 302, description: 'To the dashboard’s login page, or back to the IdP.' })
  @ApiErrors([400, 429], { 400: 'SAML_MESSAGE_INVALID: unsigned, wrongly signed, malformed or unknown' })
  async logoutCallback(
    @Body() body: Buffer | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @ReqMeta() meta: RequestMeta,
  ) {
    const form = formOf(request, body);
    if (!form) throw invalidMessage('The logout callback takes a form post');
    try {
      const { redirectUrl } = await this.logout.callback(form, meta);
      return reply.redirect(redirectUrl, 302);
    } catch (err) {
      if (err instanceof SamlRefusal || err instanceof SsoFailure) throw invalidMessage(err.message);
      throw err;
    }
  }
}

const invalidMessage = (message: string) => new AppError(400, SsoErrorCode.SAML_MESSAGE_INVALID, message);
