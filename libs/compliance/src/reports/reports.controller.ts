import { Controller, Get, Header, Query, StreamableFile } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type Actor, ApiErrors, CurrentActor, Endpoint, Permission, RawResponse } from '#platform';
import { ComplianceReportService } from './compliance-report.service.js';
import { ComplianceReportQueryDto } from './dto/compliance-report.dto.js';
import { COMPLIANCE_PDF_RESPONSES, REPORT_DOCS as DOCS, REPORT_ERRORS as ERRORS } from './reports.docs.js';

/** The compliance PDF (docs/compliance-officers.md, "The compliance PDF"; test/reports-pdf.e2e-spec.ts). */
@ApiTags('Reports')
@Controller('reports')
@ApiErrors([401, 403])
export class ReportsController {
  constructor(private readonly reports: ComplianceReportService) {}

  @Get('compliance')
  @RawResponse()
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'The compliance report as a PDF',
    description: DOCS.compliance,
    access: { roles: Permission.read, rateLimit: 'compliancePdf' },
    produces: ['application/pdf'],
    responses: COMPLIANCE_PDF_RESPONSES,
    errors: [400, 429, 503],
    errorCodes: ERRORS.compliance,
  })
  async compliance(
    @CurrentActor() actor: Actor,
    @Query() query: ComplianceReportQueryDto,
  ): Promise<StreamableFile> {
    const report = await this.reports.render(actor.organizationId, query);
    return new StreamableFile(report.pdf, {
      type: 'application/pdf',
      disposition: `attachment; filename="${report.filename}"`,
      length: report.pdf.length,
    });
  }
}
