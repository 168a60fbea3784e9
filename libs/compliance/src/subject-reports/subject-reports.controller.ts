import { Controller, Get, Header, Param, StreamableFile } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  Permission,
  RawResponse,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { SUBJECT_REF } from '#governance';
import {
  SUBJECT_REPORT_DOCS as DOCS,
  SUBJECT_REPORT_ERRORS as ERRORS,
  SUBJECT_REPORT_RESPONSES,
} from './subject-reports.docs.js';
import { SubjectReportsService } from './subject-reports.service.js';

/** The person's report (docs/data-protection.md, "The person's report (article 15)"). */
@ApiTags('Subjects')
@Controller('subjects')
@ApiErrors([401, 403])
export class SubjectReportsController {
  constructor(private readonly reports: SubjectReportsService) {}

  @Get(':ref/report')
  @RawResponse()
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'The report of the decisions about a person, as a PDF (GDPR art. 15)',
    description: DOCS.report,
    access: { roles: Permission.readSubjects },
    params: [SUBJECT_REF],
    produces: ['application/pdf'],
    responses: SUBJECT_REPORT_RESPONSES,
    errors: [400, 503],
    errorCodes: ERRORS.report,
  })
  async report(
    @CurrentActor() actor: Actor,
    @Param('ref') ref: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<StreamableFile> {
    const report = await this.reports.report(actor, ref, meta);
    return new StreamableFile(report.pdf, {
      type: 'application/pdf',
      disposition: `attachment; filename="${report.filename}"`,
      length: report.pdf.length,
    });
  }
}
