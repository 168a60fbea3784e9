import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  objectIdParam,
  type Page,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import {
  CreateFriaDto,
  FriaDeletedDto,
  FriaDto,
  FriaHistoryEntryDto,
  FriaHistoryQueryDto,
  FriaVerificationDto,
  ListFriaQueryDto,
  TransitionFriaDto,
  UpdateFriaDto,
} from './dto/fria.dto.js';
import { FriaService } from './fria.service.js';

const ID_PARAM = objectIdParam('id', 'Assessment id');
const EDITORS = Permission.editAgents;
const TRANSITION_400 = {
  400: 'VALIDATION_ERROR (status missing or unknown); FRIA_TRANSITION_FAILED (a move the lifecycle does not allow)',
};

/** Fundamental-rights impact assessments (EU AI Act article 27), plan feature friaWizard. */
@ApiTags('FRIA')
@Controller('fria')
@ApiErrors([401, 403, 500], {
  500:
    'An unexpected failure of the operation, logged with its cause; the body carries only the request id and the ' +
    'operation’s code: FRIA_LIST_FAILED, FRIA_GET_FAILED (read, verify, history), FRIA_CREATE_FAILED, ' +
    'FRIA_UPDATE_FAILED (update, transitions), FRIA_DELETE_FAILED',
})
export class FriaController {
  constructor(private readonly fria: FriaService) {}

  @Get()
  @Access({ roles: Permission.read, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'List assessments',
    description:
      'Any role; plan feature friaWizard (403 UPGRADE_REQUIRED otherwise). Filters: status, search ' +
      '(case-insensitive substring of systemName). Most recently updated first; limit default 50, max 100. ' +
      'Each row carries its completeness.',
  })
  @ApiEnvelope(FriaDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: ListFriaQueryDto): Promise<Page<FriaDto>> {
    return this.fria.list(actor, query);
  }

  @Post()
  @Access({ roles: EDITORS, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'Create an assessment',
    description:
      'Owner, admin or member; plan feature friaWizard. Created as a draft. systemName required (trimmed, ' +
      '1–200). Risks as structured rows (identifiedRisks) or the wizard fields risksIdentified/mitigations, ' +
      'collapsed into one row; both at once is 400 VALIDATION_ERROR. Writes `fria.create`.',
  })
  @ApiEnvelope(FriaDto, { status: 201 })
  @ApiErrors([400])
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateFriaDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDto> {
    return this.fria.create(actor, dto, meta);
  }

  @Get(':id')
  @Access({ roles: Permission.read, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'Get an assessment',
    description:
      'Any role; plan feature friaWizard. With completeness: the share (0–100) of the 8 assessed fields ' +
      'populated. 404 for an unknown id or another organization’s assessment.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(FriaDto)
  @ApiErrors([404])
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<FriaDto> {
    return this.fria.get(actor, id);
  }

  @Get(':id/verify')
  @Access({ roles: Permission.read, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'Verify an assessment against its anchor',
    description:
      'Any role; plan feature friaWizard. Recomputes the SHA-256 of the canonical stored contents and compares ' +
      'it with chainHash: matches is null when nothing was ever anchored. In review after edits it is false by ' +
      'design (the anchor is the submitted version); after approval false means the row changed outside the API.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(FriaVerificationDto)
  @ApiErrors([404])
  verify(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<FriaVerificationDto> {
    return this.fria.verify(actor, id);
  }

  @Get(':id/history')
  @Access({ roles: Permission.read, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'Audit history of an assessment',
    description:
      'Any role; plan feature friaWizard. The assessment’s audit entries (fria.create, fria.update, ' +
      'fria.transition), oldest first, without ip or user agent; limit default 50, max 200. 404 for an unknown ' +
      'id or another organization’s assessment.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(FriaHistoryEntryDto, { paginated: true })
  @ApiErrors([400, 404])
  history(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: FriaHistoryQueryDto,
  ): Promise<Page<FriaHistoryEntryDto>> {
    return this.fria.history(actor, id, query);
  }

  @Patch(':id')
  @Access({ roles: EDITORS, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'Edit an assessment',
    description:
      'Owner, admin or member; plan feature friaWizard. Only a draft or an assessment in review; approved or ' +
      'archived is 409 CONFLICT (an edit is not a move). In review the anchored chainHash is kept: it is the ' +
      'hash of the submitted version. Writes `fria.update` with the changed field names.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(FriaDto)
  @ApiErrors([400, 404, 409])
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateFriaDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDto> {
    return this.fria.update(actor, id, dto, meta);
  }

  @Post(':id/transition')
  @HttpCode(200)
  @Access({ roles: EDITORS, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'Move an assessment',
    description:
      'Owner, admin or member; a move to approved needs owner or admin (403 FORBIDDEN). Allowed: draft→review, ' +
      'review→approved, review→draft, approved→draft, any non-archived→archived; anything else (including the ' +
      'current state) is 400 FRIA_TRANSITION_FAILED. Entering review or approved anchors chainHash over the ' +
      'current contents; approval stamps approvedBy/approvedAt and emits `fria.approved`. Writes `fria.transition`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(FriaDto)
  @ApiErrors([400, 404], TRANSITION_400)
  transition(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: TransitionFriaDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDto> {
    return this.fria.transition(actor, id, dto.status, meta);
  }

  @Post(':id/submit')
  @HttpCode(200)
  @Access({ roles: EDITORS, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'Submit an assessment for review',
    description: 'Same as a transition to review: owner, admin or member; only from draft.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(FriaDto)
  @ApiErrors([400, 404], TRANSITION_400)
  submit(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDto> {
    return this.fria.transition(actor, id, 'review', meta);
  }

  @Post(':id/approve')
  @HttpCode(200)
  @Access({ roles: Permission.manageOrganization, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'Approve an assessment',
    description:
      'Same as a transition to approved: owner or admin; only from review. Emits `fria.approved` with ' +
      '{id, systemName, chainHash, approvedBy, approvedAt}.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(FriaDto)
  @ApiErrors([400, 404], TRANSITION_400)
  approve(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDto> {
    return this.fria.transition(actor, id, 'approved', meta);
  }

  @Delete(':id')
  @Access({ roles: EDITORS, feature: 'friaWizard' })
  @ApiOperation({
    summary: 'Delete a draft',
    description:
      'Owner, admin or member; plan feature friaWizard. Only a draft that was never submitted; any other ' +
      'assessment is 404 NOT_FOUND. Writes `fria.delete`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(FriaDeletedDto)
  @ApiErrors([404])
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDeletedDto> {
    return this.fria.remove(actor, id, meta);
  }
}
