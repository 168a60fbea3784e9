import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  Endpoint,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { PurgeResultDto, PurgeTracesDto } from './dto/purge.dto.js';
import { TRACE_PURGE_DOCS as DOCS } from './trace-purge.docs.js';
import { TracePurgeService } from './trace-purge.service.js';

@ApiTags('Traces')
@Controller('traces')
@ApiErrors([401, 403])
export class TracePurgeController {
  constructor(private readonly purges: TracePurgeService) {}

  @Post('purge')
  @HttpCode(200)
  @Endpoint({
    summary: 'Purge traces',
    description: DOCS.purge,
    access: { roles: Permission.purge },
    success: PurgeResultDto,
    errors: [400],
  })
  purge(
    @CurrentActor() actor: Actor,
    @Body() dto: PurgeTracesDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<PurgeResultDto> {
    return this.purges.purgeFor(actor, dto, meta);
  }
}
