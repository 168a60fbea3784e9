import { Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  type Page,
  PaginationQueryDto,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { TraceDto } from '../traces/dto/trace.dto.js';
import { SubjectErasureDto, SubjectErasureStartedDto, SubjectHoldDto } from './dto/subject.dto.js';
import { SUBJECT_DOCS as DOCS, SUBJECT_ERRORS as ERRORS, SUBJECT_REF } from './subjects.docs.js';
import { SubjectsService } from './subjects.service.js';

@ApiTags('Subjects')
@Controller('subjects')
@ApiErrors([400, 401, 403])
export class SubjectsController {
  constructor(private readonly subjects: SubjectsService) {}

  @Get(':ref/decisions')
  @Endpoint({
    summary: 'The decisions about a person',
    description: DOCS.decisions,
    access: { roles: Permission.readSubjects },
    params: [SUBJECT_REF],
    success: { model: TraceDto, paginated: true },
  })
  decisions(
    @CurrentActor() actor: Actor,
    @Param('ref') ref: string,
    @Query() query: PaginationQueryDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<Page<TraceDto>> {
    return this.subjects.decisions(actor, ref, query, meta);
  }

  @Post(':ref/erasure')
  @HttpCode(202)
  @Endpoint({
    summary: 'Erase a person’s content',
    description: DOCS.requestErasure,
    access: { roles: Permission.eraseSubjects },
    params: [SUBJECT_REF],
    success: { model: SubjectErasureStartedDto, status: 202 },
    errors: [409],
    errorCodes: ERRORS.requestErasure,
  })
  requestErasure(
    @CurrentActor() actor: Actor,
    @Param('ref') ref: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SubjectErasureStartedDto> {
    return this.subjects.requestErasure(actor, ref, meta);
  }

  @Get(':ref/erasure')
  @Endpoint({
    summary: 'The progress of a person’s erasure',
    description: DOCS.erasure,
    access: { roles: Permission.readSubjects },
    params: [SUBJECT_REF],
    success: SubjectErasureDto,
    errors: [404],
    errorCodes: ERRORS.erasure,
  })
  erasure(@CurrentActor() actor: Actor, @Param('ref') ref: string): Promise<SubjectErasureDto> {
    return this.subjects.erasure(actor, ref);
  }

  @Post(':ref/hold')
  @HttpCode(200)
  @Endpoint({
    summary: 'Place a legal hold on a person’s decisions',
    description: DOCS.hold,
    access: { roles: Permission.eraseSubjects },
    params: [SUBJECT_REF],
    success: SubjectHoldDto,
  })
  hold(
    @CurrentActor() actor: Actor,
    @Param('ref') ref: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SubjectHoldDto> {
    return this.subjects.hold(actor, ref, meta);
  }

  @Delete(':ref/hold')
  @Endpoint({
    summary: 'Lift a legal hold',
    description: DOCS.release,
    access: { roles: Permission.eraseSubjects },
    params: [SUBJECT_REF],
    success: SubjectHoldDto,
    errors: [404],
    errorCodes: ERRORS.release,
  })
  release(
    @CurrentActor() actor: Actor,
    @Param('ref') ref: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<SubjectHoldDto> {
    return this.subjects.release(actor, ref, meta);
  }
}
