import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
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
  CreateScheduledReportDto,
  ListScheduledReportsQueryDto,
  ScheduledReportDeletedDto,
  ScheduledReportDto,
  SendNowResultDto,
  UpdateScheduledReportDto,
} from './dto/scheduled-report.dto.js';
import { REPORT_DOCS as DOCS, REPORT_ERRORS as ERRORS, SCHEDULED_REPORT_ID } from './reports.docs.js';
import { ScheduledReportsService } from './scheduled-reports.service.js';

const ACCESS = { roles: Permission.manageOrganization, feature: 'scheduledReports' } as const;

/**
 * Scheduled reports: digests e-mailed daily, weekly or monthly (docs/compliance-officers.md, "Scheduled reports").
 */
@ApiTags('Reports')
@Controller('reports')
@ApiErrors([401, 403])
export class ScheduledReportsController {
  constructor(private readonly reports: ScheduledReportsService) {}

  @Get('schedule')
  @Endpoint({
    summary: 'List scheduled reports',
    description: DOCS.list,
    access: ACCESS,
    success: { model: ScheduledReportDto, paginated: true },
    errors: [400],
  })
  list(
    @CurrentActor() actor: Actor,
    @Query() query: ListScheduledReportsQueryDto,
  ): Promise<Page<ScheduledReportDto>> {
    return this.reports.list(actor, query);
  }

  @Post('schedule')
  @Endpoint({
    summary: 'Schedule a report',
    description: DOCS.create,
    access: ACCESS,
    success: { model: ScheduledReportDto, status: 201 },
    errors: [400],
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateScheduledReportDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ScheduledReportDto> {
    return this.reports.create(actor, dto, meta);
  }

  @Get('schedule/:id')
  @Endpoint({
    summary: 'Get a scheduled report',
    description: DOCS.get,
    access: ACCESS,
    params: [SCHEDULED_REPORT_ID],
    success: ScheduledReportDto,
    errors: [404],
  })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<ScheduledReportDto> {
    return this.reports.get(actor, id);
  }

  @Patch('schedule/:id')
  @Endpoint({
    summary: 'Update a scheduled report',
    description: DOCS.update,
    access: ACCESS,
    params: [SCHEDULED_REPORT_ID],
    success: ScheduledReportDto,
    errors: [400, 404],
  })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateScheduledReportDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ScheduledReportDto> {
    return this.reports.update(actor, id, dto, meta);
  }

  @Delete('schedule/:id')
  @Endpoint({
    summary: 'Delete a scheduled report',
    description: DOCS.remove,
    access: ACCESS,
    params: [SCHEDULED_REPORT_ID],
    success: ScheduledReportDeletedDto,
    errors: [404],
  })
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ScheduledReportDeletedDto> {
    return this.reports.remove(actor, id, meta);
  }

  @Post('send-now/:id')
  @HttpCode(200)
  @Endpoint({
    summary: 'Send a scheduled report now',
    description: DOCS.sendNow,
    access: ACCESS,
    params: [SCHEDULED_REPORT_ID],
    success: SendNowResultDto,
    errors: [404, 502],
    errorCodes: ERRORS.sendNow,
  })
  sendNow(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<SendNowResultDto> {
    return this.reports.sendNow(actor, id);
  }
}
