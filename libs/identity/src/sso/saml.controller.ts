import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type Actor,
  AppError,
  CurrentActor,
  Endpoint,
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
import {
  LOGOUT_REDIRECT_QUERY,
  METADATA_PRODUCES,
  ORGANIZATION_ID,
  SAML_DOCS as DOCS,
  SAML_ERRORS as ERRORS,
  SAML_FORM,
  SAML_RESPONSES as RESPONSES,
} from './saml.docs.js';

/**
 * The SAML form posts (the ACS, the logout callback) may carry this much: 5 MB, then 413 (test/sso-saml-refusals.e2e-spec.ts).
 */
const SAML_FORM_MAX_BYTES = 5 * 1024 * 1024;
const FORM_TYPE = 'application/x-www-form-urlencoded';

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
  @HttpCode(200)
  @Endpoint({
    summary: 'Start SAML sign-in for an organization',
    description: DOCS.initiate,
    access: 'public',
    success: SamlRedirectDto,
    errors: [400, 404, 429],
    errorCodes: ERRORS.noSaml,
  })
  async initiate(
    @Body() dto: SamlInitiateDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SamlRedirectDto> {
    const { redirectUrl, binding } = await this.saml.initiate(dto.organizationId);
    reply.header('set-cookie', samlBindingCookie(binding, SAML_REQUEST_TTL_MS / 1000));
    return { redirectUrl };
  }

  @Post('callback')
  @RawResponse()
  @RawBodyRoute(SAML_FORM_MAX_BYTES)
  @Endpoint({
    summary: 'The assertion consumer service (HTTP-POST binding)',
    description: DOCS.callback,
    access: 'public',
    ...SAML_FORM,
    responses: RESPONSES.callback,
  })
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
      await this.signIns.recordFailure(err, meta, 'saml');
      return this.handOff.fail(reply, samlBindingCookie('', 0), 'sso_failed');
    }
  }

  @Get('metadata/:orgId')
  @RawResponse()
  @Endpoint({
    summary: 'The service provider metadata of an organization (XML)',
    description: DOCS.metadata,
    access: 'public',
    params: [ORGANIZATION_ID],
    produces: METADATA_PRODUCES,
    responses: RESPONSES.metadata,
    errors: [404, 429],
    errorCodes: ERRORS.noSaml,
  })
  async metadata(@Param('orgId') orgId: string, @Res() reply: FastifyReply) {
    const xml = await this.saml.metadata(orgId);
    return reply.type('application/samlmetadata+xml; charset=utf-8').send(xml);
  }

  @Post('logout/initiate')
  @HttpCode(200)
  @Endpoint({
    summary: 'SP-initiated single logout',
    description: DOCS.logoutInitiate,
    access: {},
    success: SamlRedirectDto,
    errors: [401],
  })
  logoutInitiate(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<SamlRedirectDto> {
    return this.logout.initiate(actor, meta);
  }

  @Get('logout/callback')
  @RawResponse()
  @Endpoint({
    summary: 'Single-logout callback (HTTP-Redirect binding)',
    description: DOCS.logoutRedirect,
    access: 'public',
    query: LOGOUT_REDIRECT_QUERY,
    responses: RESPONSES.logoutRedirect,
    errors: [400, 429],
    errorCodes: ERRORS.messageInvalid,
  })
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
  @RawResponse()
  @RawBodyRoute(SAML_FORM_MAX_BYTES)
  @Endpoint({
    summary: 'Single-logout callback (HTTP-POST binding)',
    description: DOCS.logoutCallback,
    access: 'public',
    ...SAML_FORM,
    responses: RESPONSES.logoutCallback,
    errors: [400, 429],
    errorCodes: ERRORS.messageInvalid,
  })
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
