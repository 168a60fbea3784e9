import { Body, Controller, Delete, Get, HttpCode, Patch } from '@nestjs/common';
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
import { DeleteOrganizationDto, OrganizationDeletionDto } from './dto/organization-deletion.dto.js';
import { OrganizationDto, UpdateOrganizationDto } from './dto/organization.dto.js';
import { OrganizationsService } from './organizations.service.js';

@ApiTags('Organizations')
@Controller('organizations')
@ApiErrors([401])
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get('current')
  @Access()
  @ApiOperation({ summary: 'The caller’s active organization, with its plan and features' })
  @ApiEnvelope(OrganizationDto)
  current(@CurrentActor() actor: Actor): Promise<OrganizationDto> {
    return this.organizations.current(actor);
  }

  @Patch('current')
  @Access({ roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'Rename the active organization or set its trace retention',
    description:
      'Owner or admin. `name` and/or `traceRetentionDays` (at least 183, or null to keep traces for ever; the ' +
      'scheduler purges older traces daily). Writes `organization.updated` with the changes.',
  })
  @ApiEnvelope(OrganizationDto)
  @ApiErrors([400, 403])
  update(
    @CurrentActor() actor: Actor,
    @Body() dto: UpdateOrganizationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<OrganizationDto> {
    return this.organizations.update(actor, dto, meta);
  }

  @Delete('current')
  @HttpCode(202)
  @Access({ roles: Permission.deleteOrganization })
  @ApiOperation({
    summary: 'Delete the active organization (owner only)',
    description:
      'Body `{confirmName}`, which must equal the organization’s name exactly (else 400 `VALIDATION_ERROR` and ' +
      'nothing changes). From the answer on, every session, membership, workspace key, agent key and pending ' +
      'invitation of the organization is refused (401). Its data is erased after `ORG_DELETION_GRACE_DAYS` ' +
      '(default 30, `eraseAfter`); until then the operator can restore it (`org:restore`) and export it ' +
      '(`org:export`). Writes `organization.delete_requested`.',
  })
  @ApiEnvelope(OrganizationDeletionDto, { status: 202 })
  @ApiErrors([400, 403], { 400: 'VALIDATION_ERROR (confirmName missing or not the organization’s name)' })
  remove(
    @CurrentActor() actor: Actor,
    @Body() dto: DeleteOrganizationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<OrganizationDeletionDto> {
    return this.organizations.requestDeletion(actor, dto, meta);
  }
}
