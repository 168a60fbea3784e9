import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
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
import { ASSESSMENT_ID, FRIA_DOCS as DOCS, FRIA_ERRORS as ERRORS } from './fria.docs.js';
import { FriaService } from './fria.service.js';

const EDITORS = Permission.editAgents;

/** Fundamental-rights impact assessments (EU AI Act article 27), plan feature friaWizard. */
@ApiTags('FRIA')
@Controller('fria')
@ApiErrors([401, 403, 500], ERRORS.operationFailed)
export class FriaController {
  constructor(private readonly fria: FriaService) {}

  @Get()
  @Endpoint({
    summary: 'List assessments',
    description: DOCS.list,
    access: { roles: Permission.read, feature: 'friaWizard' },
    success: { model: FriaDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: ListFriaQueryDto): Promise<Page<FriaDto>> {
    return this.fria.list(actor, query);
  }

  @Post()
  @Endpoint({
    summary: 'Create an assessment',
    description: DOCS.create,
    access: { roles: EDITORS, feature: 'friaWizard' },
    success: { model: FriaDto, status: 201 },
    errors: [400],
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateFriaDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDto> {
    return this.fria.create(actor, dto, meta);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get an assessment',
    description: DOCS.get,
    access: { roles: Permission.read, feature: 'friaWizard' },
    params: [ASSESSMENT_ID],
    success: FriaDto,
    errors: [404],
  })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<FriaDto> {
    return this.fria.get(actor, id);
  }

  @Get(':id/verify')
  @Endpoint({
    summary: 'Verify an assessment against its anchor',
    description: DOCS.verify,
    access: { roles: Permission.read, feature: 'friaWizard' },
    params: [ASSESSMENT_ID],
    success: FriaVerificationDto,
    errors: [404],
  })
  verify(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<FriaVerificationDto> {
    return this.fria.verify(actor, id);
  }

  @Get(':id/history')
  @Endpoint({
    summary: 'Audit history of an assessment',
    description: DOCS.history,
    access: { roles: Permission.read, feature: 'friaWizard' },
    params: [ASSESSMENT_ID],
    success: { model: FriaHistoryEntryDto, paginated: true },
    errors: [400, 404],
  })
  history(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Query() query: FriaHistoryQueryDto,
  ): Promise<Page<FriaHistoryEntryDto>> {
    return this.fria.history(actor, id, query);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Edit an assessment',
    description: DOCS.update,
    access: { roles: EDITORS, feature: 'friaWizard' },
    params: [ASSESSMENT_ID],
    success: FriaDto,
    errors: [400, 404, 409],
  })
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
  @Endpoint({
    summary: 'Move an assessment',
    description: DOCS.transition,
    access: { roles: EDITORS, feature: 'friaWizard' },
    params: [ASSESSMENT_ID],
    success: FriaDto,
    errors: [400, 404],
    errorCodes: ERRORS.transition,
  })
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
  @Endpoint({
    summary: 'Submit an assessment for review',
    description: DOCS.submit,
    access: { roles: EDITORS, feature: 'friaWizard' },
    params: [ASSESSMENT_ID],
    success: FriaDto,
    errors: [400, 404],
    errorCodes: ERRORS.transition,
  })
  submit(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDto> {
    return this.fria.transition(actor, id, 'review', meta);
  }

  @Post(':id/approve')
  @HttpCode(200)
  @Endpoint({
    summary: 'Approve an assessment',
    description: DOCS.approve,
    access: { roles: Permission.manageOrganization, feature: 'friaWizard' },
    params: [ASSESSMENT_ID],
    success: FriaDto,
    errors: [400, 404],
    errorCodes: ERRORS.transition,
  })
  approve(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDto> {
    return this.fria.transition(actor, id, 'approved', meta);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Delete a draft',
    description: DOCS.remove,
    access: { roles: EDITORS, feature: 'friaWizard' },
    params: [ASSESSMENT_ID],
    success: FriaDeletedDto,
    errors: [404],
  })
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<FriaDeletedDto> {
    return this.fria.remove(actor, id, meta);
  }
}
