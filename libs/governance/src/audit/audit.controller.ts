import { Controller, Get, Header, Param, Query, StreamableFile } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Readable } from 'node:stream';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  type Page,
  Permission,
  RawResponse,
} from '#platform';
import { AuditService } from './audit.service.js';
import { AuditEntryDto, AuditQueryDto, AuditVerifyDto } from './dto/audit.dto.js';

@ApiTags('Audit')
@Controller('audit')
@Access({ roles: Permission.readAudit })
@ApiErrors([401, 403])
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({
    summary: 'List audit entries',
    description: 'Newest first. Owner or admin. limit default 50, max 200.',
  })
  @ApiEnvelope(AuditEntryDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: AuditQueryDto): Promise<Page<AuditEntryDto>> {
    return this.audit.list(actor.organizationId, query);
  }

  @Get('verify')
  @ApiOperation({
    summary: 'Verify the hash chain',
    description:
      'Recomputes every hash in sequence order, reading the chain in batches. `brokenAt` names the first failing entry.',
  })
  @ApiEnvelope(AuditVerifyDto)
  verify(@CurrentActor() actor: Actor): Promise<AuditVerifyDto> {
    return this.audit.verify(actor.organizationId);
  }

  @Get('export')
  @RawResponse()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Export the chain as NDJSON',
    description: 'One audit entry per line in sequence order, streamed, for offline verification.',
  })
  @ApiProduces('application/x-ndjson')
  @ApiResponse({
    status: 200,
    description: 'NDJSON stream of audit entries',
    content: { 'application/x-ndjson': { schema: { type: 'string' } } },
  })
  export(@CurrentActor() actor: Actor): StreamableFile {
    return new StreamableFile(Readable.from(this.audit.exportNdjson(actor.organizationId)), {
      type: 'application/x-ndjson',
      disposition: `attachment; filename="audit-${actor.organizationId}.ndjson"`,
    });
  }

  @Get(':id')
  @ApiOperation({ summary: 'One audit entry', description: 'Entries of another organization answer 404.' })
  @ApiEnvelope(AuditEntryDto)
  @ApiErrors([404])
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<AuditEntryDto> {
    return this.audit.get(actor.organizationId, id);
  }
}
