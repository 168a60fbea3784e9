import { Injectable } from '@nestjs/common';
import { AppError, Clock } from '#platform';
import { complianceReportHtml, footerTemplate } from './compliance-report.html.js';
import type { ComplianceReportQueryDto } from './dto/compliance-report.dto.js';
import { PdfRenderer } from './pdf-renderer.js';
import { type Period, ReportFigures } from './report-figures.js';

const DAY_MS = 86_400_000;
export const DEFAULT_PERIOD_DAYS = 30;
/** The longest period one report covers. */
export const MAX_PERIOD_DAYS = 366;

export interface RenderedReport {
  pdf: Buffer;
  filename: string;
}

/** GET /reports/compliance: the figures in SQL, the HTML, then Chromium's PDF. */
@Injectable()
export class ComplianceReportService {
  constructor(
    private readonly figures: ReportFigures,
    private readonly renderer: PdfRenderer,
    private readonly clock: Clock,
  ) {}

  periodOf(query: ComplianceReportQueryDto): Period {
    const to = query.to ? new Date(query.to) : this.clock.now();
    const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_PERIOD_DAYS * DAY_MS);
    if (from.getTime() >= to.getTime()) {
      throw AppError.validation('from must be before to', [
        { field: 'from', message: 'from must be before to' },
      ]);
    }
    if (to.getTime() - from.getTime() > MAX_PERIOD_DAYS * DAY_MS) {
      throw AppError.validation(`The period may span at most ${MAX_PERIOD_DAYS} days`, [
        { field: 'from', message: `from must be at most ${MAX_PERIOD_DAYS} days before to` },
      ]);
    }
    return { from, to };
  }

  async render(organizationId: string, query: ComplianceReportQueryDto): Promise<RenderedReport> {
    const period = this.periodOf(query);
    const data = await this.figures.compliance(organizationId, period);
    const pdf = await this.renderer.render(complianceReportHtml(data), {
      footerTemplate: footerTemplate(data),
    });
    const stamp = (d: Date) => d.toISOString().slice(0, 10);
    return { pdf, filename: `compliance-report-${stamp(period.from)}-to-${stamp(period.to)}.pdf` };
  }
}
