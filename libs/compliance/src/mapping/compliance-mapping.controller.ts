import { Body, Controller, Get, Patch, Query } from '@nestjs/common';
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
import { COMPLIANCE_MAPPING_DOCS as DOCS } from './compliance-mapping.docs.js';
import { ComplianceMappingService } from './compliance-mapping.service.js';
import {
  CatalogueDto,
  CrosswalkDto,
  FrameworkQueryDto,
  MappingDto,
  MappingUpdateDto,
  UpdateMappingDto,
} from './dto/mapping.dto.js';

const FEATURE = 'complianceMapping' as const;

/** Compliance mapping: framework catalogues and the organization's clause attestations with their coverage. */
@ApiTags('Compliance mapping')
@Controller('compliance')
@ApiErrors([401, 403])
export class ComplianceMappingController {
  constructor(private readonly mapping: ComplianceMappingService) {}

  @Get('catalogue')
  @Endpoint({
    summary: 'Framework catalogue',
    description: DOCS.catalogue,
    access: { roles: Permission.read, feature: FEATURE },
    success: CatalogueDto,
    errors: [400],
  })
  catalogue(@Query() query: FrameworkQueryDto): CatalogueDto {
    return this.mapping.catalogue(query.framework);
  }

  @Get('crosswalk')
  @Endpoint({
    summary: 'Crosswalk between the frameworks',
    description: DOCS.crosswalk,
    access: { roles: Permission.read, feature: FEATURE },
    success: CrosswalkDto,
  })
  crosswalk(@CurrentActor() actor: Actor): Promise<CrosswalkDto> {
    return this.mapping.crosswalk(actor);
  }

  @Get('mapping')
  @Endpoint({
    summary: 'The organization’s mapping of a framework',
    description: DOCS.get,
    access: { roles: Permission.read, feature: FEATURE },
    success: MappingDto,
    errors: [400],
  })
  get(@CurrentActor() actor: Actor, @Query() query: FrameworkQueryDto): Promise<MappingDto> {
    return this.mapping.mapping(actor, query.framework);
  }

  @Patch('mapping')
  @Endpoint({
    summary: 'Attest one clause',
    description: DOCS.update,
    access: { roles: Permission.manageOrganization, feature: FEATURE },
    success: MappingUpdateDto,
    errors: [400],
  })
  update(
    @CurrentActor() actor: Actor,
    @Body() dto: UpdateMappingDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<MappingUpdateDto> {
    return this.mapping.update(actor, dto, meta);
  }
}
