import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
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
  AssignReviewItemDto,
  BulkDecisionResultDto,
  BulkReviewDecisionDto,
  ListReviewQueueQueryDto,
  ReviewDecisionDto,
  ReviewItemDto,
} from './dto/review.dto.js';
import {
  REVIEW_ITEM_ID,
  REVIEW_QUEUE_DOCS as DOCS,
  REVIEW_QUEUE_ERRORS as ERRORS,
} from './review-queue.docs.js';
import { ReviewQueueService } from './review-queue.service.js';

/** The human review queue: flagged traces waiting for a decision. */
@ApiTags('Review queue')
@Controller('review-queue')
@ApiErrors([401, 403])
export class ReviewQueueController {
  constructor(private readonly queue: ReviewQueueService) {}

  @Get()
  @Endpoint({
    summary: 'List review items',
    description: DOCS.list,
    access: { roles: Permission.read },
    success: { model: ReviewItemDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: ListReviewQueueQueryDto): Promise<Page<ReviewItemDto>> {
    return this.queue.list(actor, query);
  }

  @Post('bulk-decision')
  @HttpCode(200)
  @Endpoint({
    summary: 'Decide several items',
    description: DOCS.bulk,
    access: { roles: Permission.resolveReviews },
    success: BulkDecisionResultDto,
    errors: [400],
  })
  bulk(
    @CurrentActor() actor: Actor,
    @Body() dto: BulkReviewDecisionDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<BulkDecisionResultDto> {
    return this.queue.bulkDecide(actor, dto, meta);
  }

  @Post(':id/decision')
  @HttpCode(200)
  @Endpoint({
    summary: 'Decide an item',
    description: DOCS.decide,
    access: { roles: Permission.resolveReviews },
    params: [REVIEW_ITEM_ID],
    success: ReviewItemDto,
    errors: [400, 404, 409],
    errorCodes: ERRORS.decide,
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
  @Endpoint({
    summary: 'Assign an item',
    description: DOCS.assign,
    access: { roles: Permission.resolveReviews },
    params: [REVIEW_ITEM_ID],
    success: ReviewItemDto,
    errors: [400, 404],
    errorCodes: ERRORS.notFound,
  })
  assign(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: AssignReviewItemDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<ReviewItemDto> {
    return this.queue.assign(actor, id, dto, meta);
  }
}
