import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type Actor, ApiErrors, CurrentActor, Endpoint, ReqMeta, type RequestMeta } from '#platform';
import { CPI_DOCS as DOCS, CPI_ERRORS as ERRORS } from './cpi.docs.js';
import { CpiIngestService } from './cpi-ingest.service.js';
import { CpiReadsService } from './cpi-reads.service.js';
import { CpiIngestDto, CpiIngestResultDto } from './dto/cpi-ingest.dto.js';
import { CpiAnalyticsDto, CpiRollupDto } from './dto/cpi-reads.dto.js';

/**
 * Human feedback on traces (docs/compliance-officers.md,
 * "Human feedback and the compliance-performance indicators (CPI)").
 */
@ApiTags('CPI')
@Controller('cpi')
@ApiErrors([401, 403])
export class CpiController {
  constructor(
    private readonly ingestService: CpiIngestService,
    private readonly reads: CpiReadsService,
  ) {}

  @Get()
  @Endpoint({
    summary: 'Compliance-performance rollup',
    description: DOCS.rollup,
    access: { rateLimit: 'cpiRead' },
    success: CpiRollupDto,
    errors: [429],
    errorCodes: ERRORS.rateLimited,
  })
  rollup(@CurrentActor() actor: Actor): Promise<CpiRollupDto> {
    return this.reads.rollup(actor.organizationId);
  }

  @Get('analytics')
  @Endpoint({
    summary: 'Human-feedback analytics',
    description: DOCS.analytics,
    access: { rateLimit: 'cpiRead' },
    success: CpiAnalyticsDto,
    errors: [429],
    errorCodes: ERRORS.rateLimited,
  })
  analytics(@CurrentActor() actor: Actor): Promise<CpiAnalyticsDto> {
    return this.reads.analytics(actor.organizationId);
  }

  @Post('ingest')
  @HttpCode(200)
  @Endpoint({
    summary: 'Submit a human verdict on a trace',
    description: DOCS.ingest,
    access: { via: ['workspaceKey'], write: true, feature: 'cpiFeedbackIngest' },
    success: CpiIngestResultDto,
    errors: [400, 404, 409],
    errorCodes: ERRORS.ingest,
  })
  ingest(
    @CurrentActor() actor: Actor,
    @Body() dto: CpiIngestDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CpiIngestResultDto> {
    return this.ingestService.ingest(actor, dto, meta);
  }
}
