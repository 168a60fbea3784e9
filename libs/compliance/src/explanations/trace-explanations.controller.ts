import { Controller, Get, Header, Param, Query, StreamableFile } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  envelopeOf,
  Permission,
  RawResponse,
  successBody,
} from '#platform';
import { ExplanationQueryDto, TraceExplanationDto } from './dto/trace-explanation.dto.js';
import {
  EXPLANATION_DOCS as DOCS,
  EXPLANATION_ERRORS as ERRORS,
  EXPLANATION_RESPONSES,
  TRACE_ID,
} from './explanations.docs.js';
import { TraceExplanationsService } from './trace-explanations.service.js';

/** The explanation of one decision (docs/compliance-officers.md, "Explaining a decision (art. 86)"). */
@ApiTags('Traces')
@Controller('traces')
@ApiErrors([401])
export class TraceExplanationsController {
  constructor(private readonly explanations: TraceExplanationsService) {}

  @Get(':id/explanation')
  // The body is the envelope or the PDF: the handler writes the envelope itself for the JSON.
  @RawResponse()
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'The explanation of one decision (EU AI Act art. 86), as JSON or a PDF',
    description: DOCS.explain,
    access: { via: ['jwt', 'workspaceKey'], roles: Permission.read },
    params: [TRACE_ID],
    produces: ['application/json', 'application/pdf'],
    models: [envelopeOf(TraceExplanationDto, 'one')],
    responses: EXPLANATION_RESPONSES,
    errors: [400, 403, 404, 503],
    errorCodes: ERRORS.explain,
  })
  async explain(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: ExplanationQueryDto,
  ): Promise<StreamableFile | Record<string, unknown>> {
    if (query.format !== 'pdf') return successBody(await this.explanations.explain(actor, id));
    const document = await this.explanations.pdf(actor, id);
    return new StreamableFile(document.pdf, {
      type: 'application/pdf',
      disposition: `attachment; filename="${document.filename}"`,
      length: document.pdf.length,
    });
  }
}
