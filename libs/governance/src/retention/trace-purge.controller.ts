import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
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
import { PurgeResultDto, PurgeTracesDto } from './dto/purge.dto.js';
import { TracePurgeService } from './trace-purge.service.js';

@ApiTags('Traces')
@Controller('traces')
@ApiErrors([401, 403])
export class TracePurgeController {
  constructor(private readonly purges: TracePurgeService) {}

  @Post('purge')
  @HttpCode(200)
  @Access({ roles: Permission.purge })
  @ApiOperation({
    summary: 'Purge traces',
    description:
      'Owner only. Deletes the organization’s traces created before `before` (optionally one agent’s, one ' +
      'status’s), with their review items and feedback, 1,000 per transaction so ingestion is not held up. Audit ' +
      'entries are never deleted, so the chain still verifies; one entry `traces.purged` records the filter and ' +
      'the count. `dryRun: true` counts and deletes nothing. Answers `{matched, purged}`.',
  })
  @ApiEnvelope(PurgeResultDto)
  @ApiErrors([400])
  purge(
    @CurrentActor() actor: Actor,
    @Body() dto: PurgeTracesDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<PurgeResultDto> {
    return this.purges.purgeFor(actor, dto, meta);
  }
}
