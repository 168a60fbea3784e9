import { Body, Controller, Get, Put, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { LEGACY_NOTES_DOCS as DOCS, LEGACY_NOTES_HEADERS } from './compliance-mapping.docs.js';
import { FrameworkQueryDto } from './dto/mapping.dto.js';
import { LegacyNotesDto, ReplaceLegacyNotesDto } from './dto/legacy-notes.dto.js';
import { LegacyNotesService } from './legacy-notes.service.js';

/** The deprecated free-text notes per clause, kept for clients of the earlier API. */
@ApiTags('Compliance mapping')
@Controller('compliance/mapping-notes')
@ApiErrors([401, 403])
export class LegacyNotesController {
  constructor(private readonly notes: LegacyNotesService) {}

  @Get()
  @Endpoint({
    summary: 'Legacy clause notes (deprecated)',
    description: DOCS.read,
    deprecated: true,
    access: { roles: Permission.read, feature: 'complianceMapping' },
    headers: LEGACY_NOTES_HEADERS,
    success: LegacyNotesDto,
    errors: [400],
  })
  async read(
    @CurrentActor() actor: Actor,
    @Query() query: FrameworkQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<LegacyNotesDto> {
    reply.headers(this.notes.headers());
    return this.notes.read(actor, query.framework);
  }

  @Put()
  @Endpoint({
    summary: 'Replace legacy clause notes (deprecated)',
    description: DOCS.replace,
    deprecated: true,
    access: { roles: Permission.manageOrganization, feature: 'complianceMapping' },
    success: LegacyNotesDto,
    errors: [400],
  })
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
