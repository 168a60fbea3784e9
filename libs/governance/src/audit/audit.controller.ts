import { Controller, Get, Header, HttpCode, Param, Post, Query, StreamableFile } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  type Page,
  PaginationQueryDto,
  Permission,
  Public,
  RawResponse,
} from '#platform';
import { AuditCheckpointsService } from './audit-checkpoints.service.js';
import { AuditService } from './audit.service.js';
import {
  AuditCheckpointDto,
  AuditEntryDto,
  AuditPublicKeysDto,
  AuditQueryDto,
  AuditVerifyDto,
  AuditVerifyQueryDto,
} from './dto/audit.dto.js';

/** The per-user limiter of the routes that walk the whole chain (`AUDIT_CHAIN_RATE_LIMIT`). */
const AUDIT_CHAIN_LIMITED = {
  429: 'RATE_LIMITED (the per-user limiter of chain verification, checkpoints and export; see Retry-After)',
};

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
  @ApiOperation({
    summary: 'List audit entries',
    description:
      "Newest first. Owner or admin. limit default 50, max 200. Without filters `pagination.total` is the chain's " +
      'length; with filters the count stops after 10,000 matches beyond the page asked for, and ' +
      '`pagination.totalCapped: true` then marks `total` as a lower bound.',
  })
  @ApiEnvelope(AuditEntryDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: AuditQueryDto): Promise<Page<AuditEntryDto>> {
    return this.audit.list(actor.organizationId, query);
  }

  @Get('verify')
  @Access({ roles: Permission.readAudit, rateLimit: 'auditChain' })
  @ApiOperation({
    summary: 'Verify the hash chain',
    description:
      "Recomputes each entry's hash and link in sequence order, streaming the chain in pages (memory does not grow " +
      'with the log). Incremental: checks the entries after the prefix verified by the last run (whose entry must ' +
      'still carry the hash then verified), up to the head; `full=true` checks every entry from the first. Also ' +
      'checks the chain against its highest signed checkpoint. `brokenAt` names the first failure.',
  })
  @ApiEnvelope(AuditVerifyDto)
  @ApiErrors([400, 429, 503], AUDIT_CHAIN_LIMITED)
  verify(@CurrentActor() actor: Actor, @Query() query: AuditVerifyQueryDto): Promise<AuditVerifyDto> {
    return this.audit.verify(actor.organizationId, { full: query.full === 'true' });
  }

  @Get('checkpoints')
  @ApiOperation({
    summary: 'List signed checkpoints',
    description:
      'Newest first. Owner or admin. limit default 50, max 200. Each is the chain head at a time, signed with ' +
      'Ed25519 (GET /audit/public-key); keep copies outside the operator (the `audit.checkpoint` webhook event) to ' +
      'prove later that the chain was neither rewritten nor cut.',
  })
  @ApiEnvelope(AuditCheckpointDto, { paginated: true })
  @ApiErrors([400])
  listCheckpoints(
    @CurrentActor() actor: Actor,
    @Query() query: PaginationQueryDto,
  ): Promise<Page<AuditCheckpointDto>> {
    return this.checkpoints.list(actor.organizationId, query);
  }

  @Post('checkpoints')
  @Access({ roles: Permission.readAudit, rateLimit: 'auditChain' })
  @HttpCode(201)
  @ApiOperation({
    summary: 'Sign the chain head now',
    description:
      'Owner or admin. Verifies the chain up to its head (from the last verified prefix) and signs that head; a ' +
      'head already signed answers its checkpoint. A new checkpoint is also sent as the `audit.checkpoint` event. ' +
      '409 AUDIT_CHAIN_INVALID when the chain does not verify.',
  })
  @ApiEnvelope(AuditCheckpointDto, { status: 201 })
  @ApiErrors([409, 429, 503], { 409: 'AUDIT_CHAIN_INVALID (the chain does not verify)', ...AUDIT_CHAIN_LIMITED })
  createCheckpoint(@CurrentActor() actor: Actor): Promise<AuditCheckpointDto> {
    return this.checkpoints.checkpoint(actor.organizationId);
  }

  @Get('export')
  @Access({ roles: Permission.readAudit, rateLimit: 'auditChain' })
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
  @ApiErrors([429, 503], AUDIT_CHAIN_LIMITED)
  async export(@CurrentActor() actor: Actor): Promise<StreamableFile> {
    return new StreamableFile(await this.audit.exportNdjson(actor.organizationId), {
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

@ApiTags('Audit')
@Controller('audit')
export class AuditPublicKeyController {
  constructor(private readonly checkpoints: AuditCheckpointsService) {}

  @Get('public-key')
  @Public()
  @Header('Cache-Control', 'public, max-age=300')
  @ApiOperation({
    summary: 'The keys that sign audit checkpoints',
    description:
      'Public. Every Ed25519 key the service has signed checkpoints with, the current one and those before a ' +
      "rotation, as PEM and JWK. `keyId` is the key's RFC 7638 thumbprint.",
  })
  @ApiEnvelope(AuditPublicKeysDto)
  publicKey(): Promise<AuditPublicKeysDto> {
    return this.checkpoints.publicKeys();
  }
}
