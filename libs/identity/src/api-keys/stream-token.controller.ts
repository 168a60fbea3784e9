import { Controller, Header, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type Actor, CurrentActor, Endpoint, Permission } from '#platform';
import { StreamTokenDto } from './dto/stream-token.dto.js';
import { STREAM_TOKEN_DOCS as DOCS } from './stream-token.docs.js';
import { StreamTokenService } from './stream-token.service.js';

@ApiTags('Auth')
@Controller('auth')
export class StreamTokenController {
  constructor(private readonly streamTokens: StreamTokenService) {}

  @Post('stream-token')
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Mint a stream token',
    description: DOCS.issue,
    access: { roles: Permission.read },
    success: { model: StreamTokenDto, status: 201 },
    errors: [401, 403],
  })
  issue(@CurrentActor() actor: Actor): Promise<StreamTokenDto> {
    return this.streamTokens.issue(actor);
  }
}
