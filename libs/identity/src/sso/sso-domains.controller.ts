import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { ClaimSsoDomainDto, domainTransform, SsoDomainDto } from './dto/sso-domain.dto.js';
import { SsoDomainsService } from './sso-domains.service.js';

const WHO =
  'Owner only, on plans with `sso` (Governance and above): a verified domain routes its addresses’ sign-in to ' +
  'this organization’s IdP.';
const DOMAIN_PARAM = { name: 'domain', description: 'The claimed domain, e.g. `bigcorp.example`.' };
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
  @Access({ roles: Permission.connectIdentityProvider, feature: 'sso' })
  @ApiOperation({
    summary: 'The organization’s domain claims',
    description: `${WHO} Each domain with its state and the TXT record to publish.`,
  })
  @ApiEnvelope(SsoDomainDto, { isArray: true })
  list(@CurrentActor() actor: Actor): Promise<SsoDomainDto[]> {
    return this.domains.list(actor);
  }

  @Post()
  @Access({ roles: Permission.connectIdentityProvider, feature: 'sso' })
  @ApiOperation({
    summary: 'Claim an e-mail domain',
    description:
      `${WHO} Answers a pending claim with the record to publish: TXT \`_governance-challenge.<domain>\` holding ` +
      '`record.value`. Claiming again answers the same claim. Several organizations may hold pending claims on ' +
      'one domain; the first to verify owns it. A public suffix (Public Suffix List) or a free-mail provider is ' +
      '400. Writes `sso.domain.claimed`.',
  })
  @ApiEnvelope(SsoDomainDto, { status: 201 })
  @ApiErrors([400])
  claim(
    @CurrentActor() actor: Actor,
    @Body() dto: ClaimSsoDomainDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SsoDomainDto> {
    return this.domains.claim(actor, dto.domain, meta);
  }

  @Post(':domain/verify')
  @HttpCode(200)
  @Access({ roles: Permission.connectIdentityProvider, feature: 'sso' })
  @ApiOperation({
    summary: 'Verify a domain claim by its DNS record',
    description:
      `${WHO} Looks the TXT record up now (the system resolver, or \`SSO_DNS_SERVERS\`). Found: the domain is ` +
      '`verified` and routes sign-in to this organization; writes `sso.domain.verified`. Verified by another ' +
      'organization first: 409 SSO_DOMAIN_TAKEN. Not found: 400 DOMAIN_NOT_VERIFIED with `record`.',
  })
  @ApiParam(DOMAIN_PARAM)
  @ApiEnvelope(SsoDomainDto)
  @ApiErrors([400, 404, 409], {
    400: 'DOMAIN_NOT_VERIFIED (no TXT record holds the value; the body names `record`)',
    404: 'NOT_FOUND (the organization has no claim on this domain)',
    409: 'SSO_DOMAIN_TAKEN (another organization verified the domain first)',
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
  @Access({ roles: Permission.connectIdentityProvider, feature: 'sso' })
  @ApiOperation({
    summary: 'Drop a domain claim',
    description: `${WHO} The claim goes, and with it the domain’s routing. Writes \`sso.domain.removed\`.`,
  })
  @ApiParam(DOMAIN_PARAM)
  @ApiNoContentResponse({ description: 'Dropped.' })
  @ApiErrors([404])
  async drop(
    @CurrentActor() actor: Actor,
    @Param('domain') domain: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<void> {
    await this.domains.drop(actor, domainOf(domain), meta);
  }
}
