import { Injectable, Logger } from '@nestjs/common';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  isObjectId,
  newId,
  type Page,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import {
  type CreateScheduledReportDto,
  type ListScheduledReportsQueryDto,
  type ScheduledReportDeletedDto,
  type ScheduledReportDto,
  type SendNowResultDto,
  toScheduledReportResponse,
  type UpdateScheduledReportDto,
} from './dto/scheduled-report.dto.js';
import { ReportSender } from './report-sender.js';
import { ReportsErrorCode } from './reports.errors.js';
import type { ScheduledReportRow } from './scheduled-report.schema.js';
import { ScheduledReportsRepository } from './scheduled-reports.repository.js';

const LIST_PAGE = { limit: 50, max: 100 };
const target = (id: string) => ({ type: 'scheduled_report', id });

/**
 * Scheduled reports (docs/compliance-officers.md, "Scheduled reports"): their CRUD, each change audited, and
 * send-now.
 */
@Injectable()
export class ScheduledReportsService {
  private readonly logger = new Logger('ScheduledReports');

  constructor(
    private readonly repo: ScheduledReportsRepository,
    private readonly sender: ReportSender,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  async list(actor: Actor, query: ListScheduledReportsQueryDto): Promise<Page<ScheduledReportDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.list(
      actor.organizationId,
      query.includeInactive === 'true',
      page,
    );
    return toPage(rows.map(toScheduledReportResponse), total, page);
  }

  async get(actor: Actor, id: string): Promise<ScheduledReportDto> {
    return toScheduledReportResponse(await this.load(actor.organizationId, id));
  }

  create(actor: Actor, dto: CreateScheduledReportDto, meta: RequestMeta): Promise<ScheduledReportDto> {
    const now = this.clock.now();
    return this.tx.run(async () => {
      const row = await this.repo.insert({
        id: newId(now.getTime()),
        organizationId: actor.organizationId,
        workspaceId: null,
        name: dto.name,
        frequency: dto.frequency,
        recipients: dto.recipients,
        includeMetrics: dto.includeMetrics ?? true,
        includeTopAgents: dto.includeTopAgents ?? true,
        includeAlerts: dto.includeAlerts ?? true,
        includeLowConf: dto.includeLowConf ?? false,
        isActive: dto.isActive ?? true,
        // Due at once: the first send happens on the scheduler's next tick.
        nextSendAt: now,
        sentCount: 0,
        createdBy: actor.userId,
        createdByEmail: actor.email,
        createdAt: now,
        updatedAt: now,
      });
      await this.audit.record(
        actor,
        'report.schedule.create',
        target(row.id),
        { name: row.name, frequency: row.frequency, recipients: row.recipients.length },
        meta,
      );
      return toScheduledReportResponse(row);
    });
  }

  update(
    actor: Actor,
    id: string,
    dto: UpdateScheduledReportDto,
    meta: RequestMeta,
  ): Promise<ScheduledReportDto> {
    return this.tx.run(async () => {
      await this.load(actor.organizationId, id);
      const { nextSendAt, ...rest } = dto;
      const set = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
      const row = (await this.repo.update(actor.organizationId, id, {
        ...set,
        ...(nextSendAt !== undefined ? { nextSendAt: new Date(nextSendAt) } : {}),
        updatedAt: this.clock.now(),
      }))!;
      await this.audit.record(
        actor,
        'report.schedule.update',
        target(id),
        { fields: Object.keys(dto).filter((k) => dto[k as keyof UpdateScheduledReportDto] !== undefined) },
        meta,
      );
      return toScheduledReportResponse(row);
    });
  }

  remove(actor: Actor, id: string, meta: RequestMeta): Promise<ScheduledReportDeletedDto> {
    return this.tx.run(async () => {
      const row = await this.repo.delete(actor.organizationId, this.checkedId(id));
      if (!row) throw AppError.notFound('Scheduled report');
      await this.audit.record(actor, 'report.schedule.delete', target(id), { name: row.name }, meta);
      return { id, deleted: true as const };
    });
  }

  /**
   * Renders the digest and sends it now, whether the report is active or not: sentCount and lastSentAt change,
   * nextSendAt does not. A failed send answers 502 SEND_FAILED and changes nothing.
   */
  async sendNow(actor: Actor, id: string): Promise<SendNowResultDto> {
    const report = await this.load(actor.organizationId, id);
    const now = this.clock.now();
    try {
      await this.sender.send(report, now);
    } catch (err) {
      this.logger.warn({ err, reportId: id }, 'Sending a scheduled report now failed');
      throw new AppError(
        502,
        ReportsErrorCode.SEND_FAILED,
        'The report could not be sent: the mail server did not accept it',
      );
    }
    const row = await this.repo.recordSent(actor.organizationId, id, now, undefined, null);
    if (!row) throw AppError.notFound('Scheduled report');
    return {
      sentCount: row.sentCount,
      lastSentAt: row.lastSentAt!.toISOString(),
      nextSendAt: row.nextSendAt.toISOString(),
    };
  }

  private checkedId(id: string): string {
    if (!isObjectId(id)) throw AppError.notFound('Scheduled report');
    return id;
  }

  private async load(organizationId: string, id: string): Promise<ScheduledReportRow> {
    const row = await this.repo.find(organizationId, this.checkedId(id));
    if (!row) throw AppError.notFound('Scheduled report');
    return row;
  }
}
