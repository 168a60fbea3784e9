import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
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
import { ClaimSsoDomainDto, domainTransform, SsoDomainDto } from './dto/sso-domain.dto.js';
import {
  DOMAIN,
  SSO_DOMAIN_DOCS as DOCS,
  SSO_DOMAIN_ERRORS as ERRORS,
  SSO_DOMAIN_RESPONSES as RESPONSES,
} from './sso-domains.docs.js';
import { SsoDomainsService } from './sso-domains.service.js';

const domainOf = (raw: string): string => domainTransform({ value: raw }) as string;

/**
 * E-mail domains proven by a DNS TXT record (docs/identity-administrators.md, "Proving a domain by DNS";
 * test/sso-domains.e2e-spec.ts).
 */
@ApiTags('SSO')
@Controller('sso/domains')
@ApiErrors([401, 403])
export class SsoDomainsController {
  constructor(private readonly domains: SsoDomainsService) {}

  @Get()
  @Endpoint({
    summary: 'The organization’s domain claims',
    description: DOCS.list,
    access: { roles: Permission.connectIdentityProvider, feature: 'sso' },
    success: { model: SsoDomainDto, isArray: true },
  })
  list(@CurrentActor() actor: Actor): Promise<SsoDomainDto[]> {
    return this.domains.list(actor);
  }

  @Post()
  @Endpoint({
    summary: 'Claim an e-mail domain',
    description: DOCS.claim,
    access: { roles: Permission.connectIdentityProvider, feature: 'sso' },
    success: { model: SsoDomainDto, status: 201 },
    errors: [400],
  })
  claim(
    @CurrentActor() actor: Actor,
    @Body() dto: ClaimSsoDomainDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SsoDomainDto> {
    return this.domains.claim(actor, dto.domain, meta);
  }

  @Post(':domain/verify')
  @HttpCode(200)
  @Endpoint({
    summary: 'Verify a domain claim by its DNS record',
    description: DOCS.verify,
    access: { roles: Permission.connectIdentityProvider, feature: 'sso' },
    params: [DOMAIN],
    success: SsoDomainDto,
    errors: [400, 404, 409],
    errorCodes: ERRORS.verify,
  })
  verify(
    @CurrentActor() actor: Actor,
    @Param('domain') domain: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SsoDomainDto> {
    return this.domains.verify(actor, domainOf(domain), meta);
  }

  @Delete(':domain')
  @HttpCode(204)
  @Endpoint({
    summary: 'Drop a domain claim',
    description: DOCS.drop,
    access: { roles: Permission.connectIdentityProvider, feature: 'sso' },
    params: [DOMAIN],
    responses: RESPONSES.drop,
    errors: [404],
  })
  async drop(
    @CurrentActor() actor: Actor,
    @Param('domain') domain: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<void> {
    await this.domains.drop(actor, domainOf(domain), meta);
  }
}
