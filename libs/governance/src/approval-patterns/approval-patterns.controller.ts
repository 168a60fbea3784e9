import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
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
  APPROVAL_PATTERN_DOCS as DOCS,
  APPROVAL_PATTERN_ERRORS as ERRORS,
  APPROVAL_PATTERN_ID,
} from './approval-patterns.docs.js';
import { ApprovalPatternsService } from './approval-patterns.service.js';
import { ApprovalPatternDto, ListApprovalPatternsQueryDto } from './dto/approval-pattern.dto.js';

/** Approval patterns: recurring review decisions that an owner or admin may turn into automatic approvals. */
@ApiTags('Approval patterns')
@Controller('approval-patterns')
@ApiErrors([401, 403])
export class ApprovalPatternsController {
  constructor(private readonly patterns: ApprovalPatternsService) {}

  @Get()
  @Endpoint({
    summary: 'List approval patterns',
    description: DOCS.list,
    access: { roles: Permission.read },
    success: { model: ApprovalPatternDto, paginated: true },
    errors: [400],
  })
  list(
    @CurrentActor() actor: Actor,
    @Query() query: ListApprovalPatternsQueryDto,
  ): Promise<Page<ApprovalPatternDto>> {
    return this.patterns.list(actor, query);
  }

  @Post(':id/signoff')
  @HttpCode(200)
  @Endpoint({
    summary: 'Sign off a pattern',
    description: DOCS.signoff,
    access: { roles: Permission.manageOrganization },
    params: [APPROVAL_PATTERN_ID],
    success: ApprovalPatternDto,
    errors: [404, 409],
    errorCodes: ERRORS.stateConflict,
  })
  signoff(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ApprovalPatternDto> {
    return this.patterns.signoff(actor, id, meta);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @Endpoint({
    summary: 'Revoke a pattern',
    description: DOCS.revoke,
    access: { roles: Permission.manageOrganization },
    params: [APPROVAL_PATTERN_ID],
    success: ApprovalPatternDto,
    errors: [404, 409],
    errorCodes: ERRORS.stateConflict,
  })
  revoke(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ApprovalPatternDto> {
    return this.patterns.revoke(actor, id, meta);
  }
}
