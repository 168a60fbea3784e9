import { Body, Controller, Get, Patch, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
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
  @Access({ roles: Permission.read, feature: FEATURE })
  @ApiOperation({
    summary: 'Framework catalogue',
    description:
      'Any role; plan feature complianceMapping (403 UPGRADE_REQUIRED otherwise). The clauses of iso-42001 ' +
      '(default, 18 clauses), eu-ai-act or nist-rmf, each with a paraphrased title, one line of guidance and the ' +
      'default status `gap`. 400 VALIDATION_ERROR for an unknown framework.',
  })
  @ApiEnvelope(CatalogueDto)
  @ApiErrors([400])
  catalogue(@Query() query: FrameworkQueryDto): CatalogueDto {
    return this.mapping.catalogue(query.framework);
  }

  @Get('crosswalk')
  @Access({ roles: Permission.read, feature: FEATURE })
  @ApiOperation({
    summary: 'Crosswalk between the frameworks',
    description:
      'Any role; plan feature complianceMapping. Themes (impact assessment, risk management, data governance, ' +
      'documentation and records, transparency, human oversight, accuracy, monitoring and incidents, management ' +
      'system, governance and literacy, third parties) relating clauses of iso-42001, eu-ai-act and nist-rmf, ' +
      'each clause with its title and the organization’s current status (`gap` and `noted: false` without a ' +
      'note), so one piece of evidence can be seen against all three. The themes are product data, our reading.',
  })
  @ApiEnvelope(CrosswalkDto)
  crosswalk(@CurrentActor() actor: Actor): Promise<CrosswalkDto> {
    return this.mapping.crosswalk(actor);
  }

  @Get('mapping')
  @Access({ roles: Permission.read, feature: FEATURE })
  @ApiOperation({
    summary: 'The organization’s mapping of a framework',
    description:
      'Any role; plan feature complianceMapping. The notes written for the framework (default iso-42001), in ' +
      'catalogue order, and the coverage rollup: clauses without a note count as gaps; percent = (covered + ' +
      'partial / 2) / (total − notApplicable) × 100, one decimal, 0 when every clause is not-applicable. ' +
      '400 VALIDATION_ERROR for an unknown framework.',
  })
  @ApiEnvelope(MappingDto)
  @ApiErrors([400])
  get(@CurrentActor() actor: Actor, @Query() query: FrameworkQueryDto): Promise<MappingDto> {
    return this.mapping.mapping(actor, query.framework);
  }

  @Patch('mapping')
  @Access({ roles: Permission.manageOrganization, feature: FEATURE })
  @ApiOperation({
    summary: 'Attest one clause',
    description:
      'Owner or admin; plan feature complianceMapping. Creates or updates the note of one clause (idempotent: ' +
      'repeating the same body changes nothing but the review stamp). `status` is `gap` on the first write and ' +
      'unchanged when omitted later; `evidence` (≤ 4,000 characters) and `evidenceRefs` (≤ 20, replacing the ' +
      'list) are unchanged when omitted. Stamps reviewedAt, reviewedBy and a copy of the caller’s e-mail. Every ' +
      'evidence reference must name a FRIA, policy, audit entry or incident of the organization. Audited and published as `compliance.mapping.updated`. 400 ' +
      'VALIDATION_ERROR for an unknown framework, a clauseId outside its catalogue, bounds, or a missing ' +
      'reference (details name `evidenceRefs[i]`).',
  })
  @ApiEnvelope(MappingUpdateDto)
  @ApiErrors([400])
  update(
    @CurrentActor() actor: Actor,
    @Body() dto: UpdateMappingDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<MappingUpdateDto> {
    return this.mapping.update(actor, dto, meta);
  }
}
