import { Body, Controller, Delete, Get, HttpCode, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import {
  PutSsoConfigDto,
  SsoConfigDeletedDto,
  SsoConfigDto,
  SsoTestResultDto,
} from './dto/sso-config.dto.js';
import { SsoConfigService } from './sso-config.service.js';
import { SSO_CONFIG_DOCS as DOCS } from './sso-config.docs.js';

/**
 * The organization's single sign-on configuration (docs/identity-administrators.md,
 * "Single sign-on: the configuration"; test/sso-config.e2e-spec.ts).
 */
@ApiTags('SSO')
@Controller('sso/config')
@ApiErrors([401, 403])
export class SsoConfigController {
  constructor(private readonly sso: SsoConfigService) {}

  @Get()
  @Endpoint({
    summary: 'The SSO configuration',
    description: DOCS.get,
    access: { roles: Permission.manageOrganization, feature: 'sso' },
    success: SsoConfigDto,
    errors: [404],
  })
  get(@CurrentActor() actor: Actor): Promise<SsoConfigDto> {
    return this.sso.get(actor);
  }

  @Put()
  @Endpoint({
    summary: 'Set the SSO configuration',
    description: DOCS.put,
    access: { roles: Permission.connectIdentityProvider, feature: 'sso' },
    success: SsoConfigDto,
    errors: [400, 409],
  })
  put(
    @CurrentActor() actor: Actor,
    @Body() dto: PutSsoConfigDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SsoConfigDto> {
    return this.sso.put(actor, dto, meta);
  }

  @Delete()
  @Endpoint({
    summary: 'Remove the SSO configuration',
    description: DOCS.remove,
    access: { roles: Permission.connectIdentityProvider, feature: 'sso' },
    success: SsoConfigDeletedDto,
    errors: [404],
  })
  remove(@CurrentActor() actor: Actor, @ReqMeta() meta: RequestMeta): Promise<SsoConfigDeletedDto> {
    return this.sso.remove(actor, meta);
  }

  @Post('test')
  @HttpCode(200)
  @Endpoint({
    summary: 'Test the SSO configuration against the IdP',
    description: DOCS.test,
    access: { roles: Permission.manageOrganization, feature: 'sso' },
    success: SsoTestResultDto,
    errors: [404],
  })
  test(@CurrentActor() actor: Actor): Promise<SsoTestResultDto> {
    return this.sso.test(actor);
  }
}
