import { Body, Controller, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  objectIdParam,
  type Page,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import {
  CreateIncidentDto,
  IncidentDto,
  ListIncidentsQueryDto,
  UpdateIncidentDto,
} from './dto/incident.dto.js';
import { IncidentsService } from './incidents.service.js';

const ID_PARAM = objectIdParam('id', 'Incident id');
const CLOCK =
  'timeLeftSeconds and overdue are computed at the time of the request: while open, the whole seconds to the ' +
  'deadline (0 once past) and whether it has passed; once reported or closed the clock stops (null, false).';

/** Serious incidents (EU AI Act article 73) and their reporting clock. */
@ApiTags('Incidents')
@Controller('incidents')
@ApiErrors([401, 403])
export class IncidentsController {
  constructor(private readonly incidents: IncidentsService) {}

  @Get()
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'List incidents',
    description:
      `Any role. Filters: status, overdue (true: open and past the deadline). Newest first; limit default 50, ` +
      `max 100. ${CLOCK}`,
  })
  @ApiEnvelope(IncidentDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: ListIncidentsQueryDto): Promise<Page<IncidentDto>> {
    return this.incidents.list(actor, query);
  }

  @Post()
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Record an incident',
    description:
      'Owner, admin or member. The deadline is awareAt plus 10 days (death), 2 (widespread_infringement, ' +
      'critical_infrastructure) or 15 (other). awareAt may not be in the future; agentId and traceId must be the ' +
      'organization’s (400 VALIDATION_ERROR otherwise). Opens the incident and writes `incident.create`.',
  })
  @ApiEnvelope(IncidentDto, { status: 201 })
  @ApiErrors([400])
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateIncidentDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<IncidentDto> {
    return this.incidents.create(actor, dto, meta);
  }

  @Get(':id')
  @Access({ roles: Permission.read })
  @ApiOperation({ summary: 'Get an incident', description: `Any role. ${CLOCK}` })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(IncidentDto)
  @ApiErrors([404])
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<IncidentDto> {
    return this.incidents.get(actor, id);
  }

  @Patch(':id')
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Report or close an incident',
    description:
      'Owner, admin or member. open → reported (reportedAt, default now, between awareAt and now) or closed; ' +
      'reported → closed. The current status again (without reportedAt) changes nothing. Writes ' +
      '`incident.update`. Errors: 400 VALIDATION_ERROR, 404 NOT_FOUND, 409 CONFLICT (a move not allowed, or a ' +
      'concurrent change).',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(IncidentDto)
  @ApiErrors([400, 404, 409])
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateIncidentDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<IncidentDto> {
    return this.incidents.update(actor, id, dto, meta);
  }
}
