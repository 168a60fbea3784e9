import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
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
import { ApprovalPatternsService } from './approval-patterns.service.js';
import { ApprovalPatternDto, ListApprovalPatternsQueryDto } from './dto/approval-pattern.dto.js';

const ID_PARAM = objectIdParam('id', 'Approval pattern id');
const STATE_CONFLICT = {
  409: 'PATTERN_STATE_CONFLICT (the pattern is not in a state this move starts from)',
};

/** Approval patterns: recurring review decisions that an owner or admin may turn into automatic approvals. */
@ApiTags('Approval patterns')
@Controller('approval-patterns')
@ApiErrors([401, 403])
export class ApprovalPatternsController {
  constructor(private readonly patterns: ApprovalPatternsService) {}

  @Get()
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'List approval patterns',
    description:
      'Any role. A pattern is a signature (agent, `outputDecision.action`, sorted matched policy ids) with its ' +
      'review decisions counted: each approve or reject is one observation. At 50 observations or more with 95 % ' +
      'approvals or more it moves from `observing` to `pending_signoff`. Most recently changed first; limit ' +
      'default 50, max 100.',
  })
  @ApiEnvelope(ApprovalPatternDto, { paginated: true })
  @ApiErrors([400])
  list(
    @CurrentActor() actor: Actor,
    @Query() query: ListApprovalPatternsQueryDto,
  ): Promise<Page<ApprovalPatternDto>> {
    return this.patterns.list(actor, query);
  }

  @Post(':id/signoff')
  @HttpCode(200)
  @Access({ roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'Sign off a pattern',
    description:
      'Owner or admin; only from `pending_signoff`. The pattern becomes `active`: from then on a trace that ' +
      'policies flag with its signature is stored approved with `metadata.autoApprovedBy` (the pattern id), ' +
      'answered 201, audited `trace.auto_approved`, and gets no review item. Writes `approval_pattern.signed_off`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(ApprovalPatternDto)
  @ApiErrors([404, 409], STATE_CONFLICT)
  signoff(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ApprovalPatternDto> {
    return this.patterns.signoff(actor, id, meta);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @Access({ roles: Permission.manageOrganization })
  @ApiOperation({
    summary: 'Revoke a pattern',
    description:
      'Owner or admin; from `active` or `pending_signoff`. The pattern goes back to `observing` with its counts ' +
      'reset, and flagged traces with its signature go to review again. Writes `approval_pattern.revoked`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(ApprovalPatternDto)
  @ApiErrors([404, 409], STATE_CONFLICT)
  revoke(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ApprovalPatternDto> {
    return this.patterns.revoke(actor, id, meta);
  }
}
