import { Controller, Get, Header, Query, StreamableFile } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Access, type Actor, ApiErrors, CurrentActor, Permission, RawResponse } from '#platform';
import { ComplianceReportService } from './compliance-report.service.js';
import { ComplianceReportQueryDto } from './dto/compliance-report.dto.js';

/** The compliance PDF (docs/compliance-officers.md, "The compliance PDF"; test/reports-pdf.e2e-spec.ts). */
@ApiTags('Reports')
@Controller('reports')
@ApiErrors([401, 403])
export class ReportsController {
  constructor(private readonly reports: ComplianceReportService) {}

  @Get('compliance')
  @Access({ roles: Permission.read, rateLimit: 'compliancePdf' })
  @RawResponse()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'The compliance report as a PDF',
    description:
      'Any role, any plan; 10 per user per hour (429 RATE_LIMITED with Retry-After beyond). The period is ' +
      '[from, to), by default the 30 days before now, at most 366 days. Sections, in order: cover (organization, ' +
      'period, generated at, schema version); trace volume by status with a chart; average confidence by status; ' +
      'policy coverage; review backlog; audit chain verification (valid, entries, head hash, first break); the ' +
      'incident clock; the regulator-mapping table of every framework; FRIAs by status. Rendered by Chromium ' +
      '(CHROMIUM_PATH, else a system Chromium, else the one bundled in the npm package); 503 SERVICE_UNAVAILABLE ' +
      'when none is usable, when renders are saturated or when one times out. A large organization may take ' +
      'seconds.',
  })
  @ApiProduces('application/pdf')
  @ApiResponse({
    status: 200,
    description: 'The PDF, as an attachment (Content-Disposition: attachment).',
    content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiErrors([400, 429, 503], {
    429: 'RATE_LIMITED (10 per user per hour; see Retry-After)',
    503: 'SERVICE_UNAVAILABLE (no usable Chromium: the message names CHROMIUM_PATH; renders saturated; a render timed out)',
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
