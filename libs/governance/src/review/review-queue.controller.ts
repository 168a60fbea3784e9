import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
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
  AssignReviewItemDto,
  BulkDecisionResultDto,
  BulkReviewDecisionDto,
  ListReviewQueueQueryDto,
  ReviewDecisionDto,
  ReviewItemDto,
} from './dto/review.dto.js';
import { ReviewQueueService } from './review-queue.service.js';

const ID_PARAM = objectIdParam('id', 'Review item id');
const NOT_FOUND = { 404: 'NOT_FOUND (no review item with this id in the caller’s organization)' };
const DECISION_RULES =
  '`approve` → item `approved`, trace `approved`; `reject` → item `rejected`, trace `blocked`; `escalate` → item ' +
  '`escalated`, trace stays `flagged`, and from then on only an owner or admin may decide it. Approve and reject ' +
  'each count one observation of the item’s approval pattern. The decision, the trace’s status, the audit entry ' +
  '(`review.approved|rejected|escalated`) and the event (`review.completed` or `review.escalated`, to webhooks ' +
  'and the event stream) commit together. Feedback on the trace (POST /cpi/ingest) closes a pending or escalated ' +
  'item itself (`resolution: feedback`), after which a decision answers 409 `ALREADY_DECIDED`.';

/** The human review queue: flagged traces waiting for a decision. */
@ApiTags('Review queue')
@Controller('review-queue')
@ApiErrors([401, 403])
export class ReviewQueueController {
  constructor(private readonly queue: ReviewQueueService) {}

  @Get()
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'List review items',
    description:
      'Any role. `status` defaults to `pending`; `assignedTo` takes a user id, `me` or `none`. Oldest first (the ' +
      'head of the queue); limit default 50, max 100. Each item carries an excerpt of its trace (prompt and ' +
      'output text, 500 characters each, and the confidence) and the policies that flagged it.',
  })
  @ApiEnvelope(ReviewItemDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: ListReviewQueueQueryDto): Promise<Page<ReviewItemDto>> {
    return this.queue.list(actor, query);
  }

  @Post('bulk-decision')
  @HttpCode(200)
  @Access({ roles: Permission.resolveReviews })
  @ApiOperation({
    summary: 'Decide several items',
    description:
      `Owner, admin or member. 1 to 100 ids, each decided on its own as by the single decision: ${DECISION_RULES} ` +
      'Answers the ids decided in `processed` and, for each other id, its error code and message in `failed` ' +
      '(`NOT_FOUND`, `ALREADY_DECIDED`, `ALREADY_ESCALATED`, `FORBIDDEN`).',
  })
  @ApiEnvelope(BulkDecisionResultDto)
  @ApiErrors([400])
  bulk(
    @CurrentActor() actor: Actor,
    @Body() dto: BulkReviewDecisionDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<BulkDecisionResultDto> {
    return this.queue.bulkDecide(actor, dto, meta);
  }

  @Post(':id/decision')
  @HttpCode(200)
  @Access({ roles: Permission.resolveReviews })
  @ApiOperation({
    summary: 'Decide an item',
    description:
      `Owner, admin or member; viewers read only. ${DECISION_RULES} An item approved or rejected already answers ` +
      '409 `ALREADY_DECIDED`, also to the losers of concurrent decisions; escalating an escalated item answers 409 ' +
      '`ALREADY_ESCALATED`; a member deciding an escalated item gets 403.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(ReviewItemDto)
  @ApiErrors([400, 404, 409], {
    ...NOT_FOUND,
    409: 'ALREADY_DECIDED (approved or rejected already) or ALREADY_ESCALATED',
  })
  decide(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: ReviewDecisionDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ReviewItemDto> {
    return this.queue.decide(actor, id, dto, meta);
  }

  @Patch(':id/assign')
  @Access({ roles: Permission.resolveReviews })
  @ApiOperation({
    summary: 'Assign an item',
    description:
      'Owner, admin or member. `assignedTo` is the user id of an active member of the organization (else 400), or ' +
      'null to unassign. Writes `review.assigned` when the assignee changes.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(ReviewItemDto)
  @ApiErrors([400, 404], NOT_FOUND)
  assign(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: AssignReviewItemDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ReviewItemDto> {
    return this.queue.assign(actor, id, dto, meta);
  }
}
