import { Body, Controller, Get, Put, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { FrameworkQueryDto } from './dto/mapping.dto.js';
import { LegacyNotesDto, ReplaceLegacyNotesDto } from './dto/legacy-notes.dto.js';
import { LegacyNotesService } from './legacy-notes.service.js';

const DEPRECATION =
  ' Deprecated: answered with `Deprecation: true`, a `Sunset` date at least 90 days ahead (2027-04-12 unless ' +
  'that is nearer) and `Link: <…/docs/migrations/compliance-mapping-notes>; rel="deprecation"`. Use ' +
  '`/compliance/mapping`.';

/** The deprecated free-text notes per clause, kept for clients of the earlier API. */
@ApiTags('Compliance mapping')
@Controller('compliance/mapping-notes')
@ApiErrors([401, 403])
export class LegacyNotesController {
  constructor(private readonly notes: LegacyNotesService) {}

  @Get()
  @Access({ roles: Permission.read, feature: 'complianceMapping' })
  @ApiOperation({
    deprecated: true,
    summary: 'Legacy clause notes (deprecated)',
    description:
      'Any role; plan feature complianceMapping. `{notes: {clauseId: text}}` for the framework (default ' +
      'iso-42001): the structured notes’ evidence, with the legacy strings merged over them. 400 ' +
      'VALIDATION_ERROR for an unknown framework.' +
      DEPRECATION,
  })
  @ApiEnvelope(LegacyNotesDto)
  @ApiErrors([400])
  @ApiHeader({ name: 'Sunset', required: false, description: 'Response header: the retirement date.' })
  async read(
    @CurrentActor() actor: Actor,
    @Query() query: FrameworkQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<LegacyNotesDto> {
    reply.headers(this.notes.headers());
    return this.notes.read(actor, query.framework);
  }

  @Put()
  @Access({ roles: Permission.manageOrganization, feature: 'complianceMapping' })
  @ApiOperation({
    deprecated: true,
    summary: 'Replace legacy clause notes (deprecated)',
    description:
      'Owner or admin; plan feature complianceMapping. Replaces the framework’s legacy map (default iso-42001) ' +
      'and nothing else: the structured notes are untouched. Keys must be clause ids of the framework, values ' +
      'strings of at most 4,000 characters (400 VALIDATION_ERROR with details `notes.<clauseId>` otherwise). ' +
      'Audited `compliance.mapping_notes.updated`. Answers the merged view, like the GET.' +
      DEPRECATION,
  })
  @ApiEnvelope(LegacyNotesDto)
  @ApiErrors([400])
  async replace(
    @CurrentActor() actor: Actor,
    @Body() dto: ReplaceLegacyNotesDto,
    @ReqMeta() meta: RequestMeta,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<LegacyNotesDto> {
    reply.headers(this.notes.headers());
    return this.notes.replace(actor, dto, meta);
  }
}
