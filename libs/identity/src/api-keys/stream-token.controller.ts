import { Controller, Header, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Access, type Actor, ApiEnvelope, ApiErrors, CurrentActor, Permission } from '#platform';
import { StreamTokenDto } from './dto/stream-token.dto.js';
import { StreamTokenService } from './stream-token.service.js';

@ApiTags('Auth')
@Controller('auth')
export class StreamTokenController {
  constructor(private readonly streamTokens: StreamTokenService) {}

  @Post('stream-token')
  @Access({ roles: Permission.read })
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Mint a stream token',
    description:
      'Any role, user session only. 201: each call creates a new single-use token, valid 60 seconds, bound to the ' +
      'caller and the active organization. Present it as `?token=` when opening `GET /events/stream`; a JWT never ' +
      'travels in a URL.',
  })
  @ApiEnvelope(StreamTokenDto, { status: 201 })
  @ApiErrors([401, 403])
  issue(@CurrentActor() actor: Actor): Promise<StreamTokenDto> {
    return this.streamTokens.issue(actor);
  }
}
