import { Body, Controller, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
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
import { INCIDENT_DOCS as DOCS, INCIDENT_ID } from './incidents.docs.js';
import { IncidentsService } from './incidents.service.js';

/** Serious incidents (EU AI Act article 73) and their reporting clock. */
@ApiTags('Incidents')
@Controller('incidents')
@ApiErrors([401, 403])
export class IncidentsController {
  constructor(private readonly incidents: IncidentsService) {}

  @Get()
  @Endpoint({
    summary: 'List incidents',
    description: DOCS.list,
    access: { roles: Permission.read },
    success: { model: IncidentDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: ListIncidentsQueryDto): Promise<Page<IncidentDto>> {
    return this.incidents.list(actor, query);
  }

  @Post()
  @Endpoint({
    summary: 'Record an incident',
    description: DOCS.create,
    access: { roles: Permission.editAgents },
    success: { model: IncidentDto, status: 201 },
    errors: [400],
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateIncidentDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<IncidentDto> {
    return this.incidents.create(actor, dto, meta);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get an incident',
    description: DOCS.get,
    access: { roles: Permission.read },
    params: [INCIDENT_ID],
    success: IncidentDto,
    errors: [404],
  })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<IncidentDto> {
    return this.incidents.get(actor, id);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Report or close an incident',
    description: DOCS.update,
    access: { roles: Permission.editAgents },
    params: [INCIDENT_ID],
    success: IncidentDto,
    errors: [400, 404, 409],
  })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateIncidentDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<IncidentDto> {
    return this.incidents.update(actor, id, dto, meta);
  }
}
