import { Body, Controller, Get, Patch } from '@nestjs/common';
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
}
