import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
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
  CreateScheduledReportDto,
  ListScheduledReportsQueryDto,
  ScheduledReportDeletedDto,
  ScheduledReportDto,
  SendNowResultDto,
  UpdateScheduledReportDto,
} from './dto/scheduled-report.dto.js';
import { ScheduledReportsService } from './scheduled-reports.service.js';

const ID_PARAM = objectIdParam('id', 'Scheduled report id');
const ACCESS = { roles: Permission.manageOrganization, feature: 'scheduledReports' } as const;
const WHO = 'Owner or admin; plan feature scheduledReports (Governance and above).';

/**
 * Scheduled reports: digests e-mailed daily, weekly or monthly (docs/compliance-officers.md, "Scheduled reports").
 */
@ApiTags('Reports')
@Controller('reports')
@ApiErrors([401, 403])
export class ScheduledReportsController {
  constructor(private readonly reports: ScheduledReportsService) {}

  @Get('schedule')
  @Access(ACCESS)
  @ApiOperation({
    summary: 'List scheduled reports',
    description: `${WHO} Active reports, newest first; includeInactive=true lists all. Limit default 50, max 100.`,
  })
  @ApiEnvelope(ScheduledReportDto, { paginated: true })
  @ApiErrors([400])
  list(
    @CurrentActor() actor: Actor,
    @Query() query: ListScheduledReportsQueryDto,
  ): Promise<Page<ScheduledReportDto>> {
    return this.reports.list(actor, query);
  }

  @Post('schedule')
  @Access(ACCESS)
  @ApiOperation({
    summary: 'Schedule a report',
    description:
      `${WHO} Recipients are lower-cased and de-duplicated, then 1 to 20 are allowed. nextSendAt is the creation ` +
      'time, so the first digest goes out on the scheduler’s next tick. Records the creator and their e-mail. ' +
      'Writes `report.schedule.create`.',
  })
  @ApiEnvelope(ScheduledReportDto, { status: 201 })
  @ApiErrors([400])
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateScheduledReportDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ScheduledReportDto> {
    return this.reports.create(actor, dto, meta);
  }

  @Get('schedule/:id')
  @Access(ACCESS)
  @ApiOperation({ summary: 'Get a scheduled report', description: WHO })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(ScheduledReportDto)
  @ApiErrors([404])
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<ScheduledReportDto> {
    return this.reports.get(actor, id);
  }

  @Patch('schedule/:id')
  @Access(ACCESS)
  @ApiOperation({
    summary: 'Update a scheduled report',
    description:
      `${WHO} Any field, including isActive (false pauses it, true resumes it) and nextSendAt. ` +
      'Writes `report.schedule.update`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(ScheduledReportDto)
  @ApiErrors([400, 404])
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateScheduledReportDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ScheduledReportDto> {
    return this.reports.update(actor, id, dto, meta);
  }

  @Delete('schedule/:id')
  @Access(ACCESS)
  @ApiOperation({
    summary: 'Delete a scheduled report',
    description: `${WHO} A hard delete. Writes \`report.schedule.delete\`.`,
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(ScheduledReportDeletedDto)
  @ApiErrors([404])
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ScheduledReportDeletedDto> {
    return this.reports.remove(actor, id, meta);
  }

  @Post('send-now/:id')
  @HttpCode(200)
  @Access(ACCESS)
  @ApiOperation({
    summary: 'Send a scheduled report now',
    description:
      `${WHO} Renders the digest for the period since the last send and sends it at once, active or not: ` +
      'sentCount and lastSentAt change, nextSendAt does not. 502 SEND_FAILED when the mail server does not ' +
      'accept it (nothing changes).',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(SendNowResultDto)
  @ApiErrors([404, 502], { 502: 'SEND_FAILED (the mail server refused the digest, or none is configured)' })
  sendNow(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<SendNowResultDto> {
    return this.reports.sendNow(actor, id);
  }
}
