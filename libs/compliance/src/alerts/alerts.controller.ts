import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
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

const ID_PARAM = objectIdParam('id', 'Alert rule id');

/** Alert rules on the organization's metrics, evaluated by the scheduler (docs/compliance-officers.md, "Alerts"). */
@ApiTags('Alerts')
@Controller('alerts')
@ApiErrors([401, 403])
export class AlertsController {
  constructor(private readonly alerts: AlertsService) {}

  @Get()
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'List alert rules',
    description: 'Any role. Newest first; filter by `state` and `isActive`; limit default 50, max 100.',
  })
  @ApiEnvelope(AlertDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: ListAlertsQueryDto): Promise<Page<AlertDto>> {
    return this.alerts.list(actor, query);
  }

  @Post()
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Create an alert rule',
    description:
      'Owner, admin or member. Starts in state `ok`; evaluated at the next tick of the scheduler (every ' +
      '`ALERT_INTERVAL_MS`), then every interval. A change ok → firing or back notifies each integration once, ' +
      'writes the audit entry and publishes the event `alert.triggered` or `alert.resolved`. At most 100 rules per ' +
      'organization (409). Unknown `agentId` or `integrationIds`: 400. Writes `alert.create`.',
  })
  @ApiEnvelope(AlertDto, { status: 201 })
  @ApiErrors([400, 409])
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateAlertDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AlertDto> {
    return this.alerts.create(actor, dto, meta);
  }

  @Get(':id')
  @Access({ roles: Permission.read })
  @ApiOperation({ summary: 'Get an alert rule', description: 'Any role.' })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(AlertDto)
  @ApiErrors([404])
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<AlertDto> {
    return this.alerts.get(actor, id);
  }

  @Get(':id/history')
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'The transitions of an alert rule',
    description:
      'Any role. Each ok ↔ firing change with the value measured; newest first; limit default 50, max 100.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(AlertTransitionDto, { paginated: true })
  @ApiErrors([400, 404])
  history(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: AlertHistoryQueryDto,
  ): Promise<Page<AlertTransitionDto>> {
    return this.alerts.history(actor, id, query);
  }

  @Patch(':id')
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Update an alert rule',
    description:
      'Owner, admin, or the member who created it. A change of what is measured is evaluated at the next tick; ' +
      '`isActive: false` stops evaluation and rests the state at ok without a notification. Writes `alert.update`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(AlertDto)
  @ApiErrors([400, 404])
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateAlertDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AlertDto> {
    return this.alerts.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Access({ roles: Permission.deleteAlerts })
  @ApiOperation({
    summary: 'Delete an alert rule',
    description: 'The owner only (the role table). Its history is kept for digests. Writes `alert.delete`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(AlertDeletedDto)
  @ApiErrors([404])
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AlertDeletedDto> {
    return this.alerts.remove(actor, id, meta);
  }
}
