import { Controller, Get, Header, HttpCode, Param, Post, Query, StreamableFile } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  type Page,
  PaginationQueryDto,
  Permission,
  RawResponse,
} from '#platform';
import { AuditCheckpointsService } from './audit-checkpoints.service.js';
import { AUDIT_DOCS as DOCS, AUDIT_ERRORS as ERRORS, AUDIT_EXPORT_RESPONSES } from './audit.docs.js';
import { AuditService } from './audit.service.js';
import {
  AuditCheckpointDto,
  AuditEntryDto,
  AuditPublicKeysDto,
  AuditQueryDto,
  AuditVerifyDto,
  AuditVerifyQueryDto,
} from './dto/audit.dto.js';

@ApiTags('Audit')
@Controller('audit')
@Access({ roles: Permission.readAudit })
@ApiErrors([401, 403])
export class AuditController {
  constructor(
    private readonly audit: AuditService,
    private readonly checkpoints: AuditCheckpointsService,
  ) {}

  @Get()
  @Endpoint({
    summary: 'List audit entries',
    description: DOCS.list,
    success: { model: AuditEntryDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: AuditQueryDto): Promise<Page<AuditEntryDto>> {
    return this.audit.list(actor.organizationId, query);
  }

  @Get('verify')
  @Endpoint({
    summary: 'Verify the hash chain',
    description: DOCS.verify,
    access: { roles: Permission.readAudit, rateLimit: 'auditChain' },
    success: AuditVerifyDto,
    errors: [400, 429, 503],
    errorCodes: ERRORS.chainLimited,
  })
  verify(@CurrentActor() actor: Actor, @Query() query: AuditVerifyQueryDto): Promise<AuditVerifyDto> {
    return this.audit.verify(actor.organizationId, {
      full: query.full === 'true',
      content: query.content === 'true',
    });
  }

  @Get('checkpoints')
  @Endpoint({
    summary: 'List signed checkpoints',
    description: DOCS.listCheckpoints,
    success: { model: AuditCheckpointDto, paginated: true },
    errors: [400],
  })
  listCheckpoints(
    @CurrentActor() actor: Actor,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<AuditCheckpointDto>> {
    return this.checkpoints.list(actor.organizationId, query);
  }

  @Post('checkpoints')
  @HttpCode(201)
  @Endpoint({
    summary: 'Sign the chain head now',
    description: DOCS.createCheckpoint,
    access: { roles: Permission.readAudit, rateLimit: 'auditChain' },
    success: { model: AuditCheckpointDto, status: 201 },
    errors: [409, 429, 503],
    errorCodes: ERRORS.createCheckpoint,
  })
  createCheckpoint(@CurrentActor() actor: Actor): Promise<AuditCheckpointDto> {
    return this.checkpoints.checkpoint(actor.organizationId);
  }

  @Get('export')
  @RawResponse()
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Export the chain as NDJSON',
    description: DOCS.export,
    access: { roles: Permission.readAudit, rateLimit: 'auditChain' },
    produces: ['application/x-ndjson'],
    responses: AUDIT_EXPORT_RESPONSES,
    errors: [429, 503],
    errorCodes: ERRORS.chainLimited,
  })
  async export(@CurrentActor() actor: Actor): Promise<StreamableFile> {
    return new StreamableFile(await this.audit.exportNdjson(actor.organizationId), {
      type: 'application/x-ndjson',
      disposition: `attachment; filename="audit-${actor.organizationId}.ndjson"`,
    });
  }

  @Get(':id')
  @Endpoint({ summary: 'One audit entry', description: DOCS.get, success: AuditEntryDto, errors: [404] })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<AuditEntryDto> {
    return this.audit.get(actor.organizationId, id);
  }
}

@ApiTags('Audit')
@Controller('audit')
export class AuditPublicKeyController {
  constructor(private readonly checkpoints: AuditCheckpointsService) {}

  @Get('public-key')
  @Header('Cache-Control', 'public, max-age=300')
  @Endpoint({
    summary: 'The keys that sign audit checkpoints',
    description: DOCS.publicKey,
    access: 'public',
    success: AuditPublicKeysDto,
  })
  publicKey(): Promise<AuditPublicKeysDto> {
    return this.checkpoints.publicKeys();
  }
}
