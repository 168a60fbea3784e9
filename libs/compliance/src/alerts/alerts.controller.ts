import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
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
import { ALERT_DOCS as DOCS, ALERT_ID } from './alerts.docs.js';
import { AlertsService } from './alerts.service.js';
import {
  AlertDeletedDto,
  AlertDto,
  AlertHistoryQueryDto,
  AlertTransitionDto,
  CreateAlertDto,
  ListAlertsQueryDto,
  UpdateAlertDto,
} from './dto/alert.dto.js';

/** Alert rules on the organization's metrics, evaluated by the scheduler (docs/compliance-officers.md, "Alerts"). */
@ApiTags('Alerts')
@Controller('alerts')
@ApiErrors([401, 403])
export class AlertsController {
  constructor(private readonly alerts: AlertsService) {}

  @Get()
  @Endpoint({
    summary: 'List alert rules',
    description: DOCS.list,
    access: { roles: Permission.read },
    success: { model: AlertDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: ListAlertsQueryDto): Promise<Page<AlertDto>> {
    return this.alerts.list(actor, query);
  }

  @Post()
  @Endpoint({
    summary: 'Create an alert rule',
    description: DOCS.create,
    access: { roles: Permission.editAgents },
    success: { model: AlertDto, status: 201 },
    errors: [400, 409],
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateAlertDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AlertDto> {
    return this.alerts.create(actor, dto, meta);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get an alert rule',
    description: DOCS.get,
    access: { roles: Permission.read },
    params: [ALERT_ID],
    success: AlertDto,
    errors: [404],
  })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<AlertDto> {
    return this.alerts.get(actor, id);
  }

  @Get(':id/history')
  @Endpoint({
    summary: 'The transitions of an alert rule',
    description: DOCS.history,
    access: { roles: Permission.read },
    params: [ALERT_ID],
    success: { model: AlertTransitionDto, paginated: true },
    errors: [400, 404],
  })
  history(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: AlertHistoryQueryDto,
  ): Promise<Page<AlertTransitionDto>> {
    return this.alerts.history(actor, id, query);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Update an alert rule',
    description: DOCS.update,
    access: { roles: Permission.editAgents },
    params: [ALERT_ID],
    success: AlertDto,
    errors: [400, 404],
  })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateAlertDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AlertDto> {
    return this.alerts.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Delete an alert rule',
    description: DOCS.remove,
    access: { roles: Permission.deleteAlerts },
    params: [ALERT_ID],
    success: AlertDeletedDto,
    errors: [404],
  })
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AlertDeletedDto> {
    return this.alerts.remove(actor, id, meta);
  }
}
