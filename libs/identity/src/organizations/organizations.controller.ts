import { Body, Controller, Delete, Get, HttpCode, Patch } from '@nestjs/common';
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
import { DeleteOrganizationDto, OrganizationDeletionDto } from './dto/organization-deletion.dto.js';
import { OrganizationDto, UpdateOrganizationDto } from './dto/organization.dto.js';
import { ORGANIZATION_DOCS as DOCS, ORGANIZATION_ERRORS as ERRORS } from './organizations.docs.js';
import { OrganizationsService } from './organizations.service.js';

@ApiTags('Organizations')
@Controller('organizations')
@ApiErrors([401])
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get('current')
  @Endpoint({
    summary: 'The caller’s active organization, with its plan and features',
    access: {},
    success: OrganizationDto,
  })
  current(@CurrentActor() actor: Actor): Promise<OrganizationDto> {
    return this.organizations.current(actor);
  }

  @Patch('current')
  @Endpoint({
    summary: 'Rename the active organization, or set its trace retention, contest contact or PII masking',
    description: DOCS.update,
    access: { roles: Permission.manageOrganization },
    success: OrganizationDto,
    errors: [400, 403],
  })
  update(
    @CurrentActor() actor: Actor,
    @Body() dto: UpdateOrganizationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<OrganizationDto> {
    return this.organizations.update(actor, dto, meta);
  }

  @Delete('current')
  @HttpCode(202)
  @Endpoint({
    summary: 'Delete the active organization (owner only)',
    description: DOCS.remove,
    access: { roles: Permission.deleteOrganization },
    success: { model: OrganizationDeletionDto, status: 202 },
    errors: [400, 403],
    errorCodes: ERRORS.remove,
  })
  remove(
    @CurrentActor() actor: Actor,
    @Body() dto: DeleteOrganizationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<OrganizationDeletionDto> {
    return this.organizations.requestDeletion(actor, dto, meta);
  }
}
