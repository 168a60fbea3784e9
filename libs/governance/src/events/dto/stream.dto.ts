import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class StreamQueryDto {
  @ApiPropertyOptional({
    description: 'A stream token from `POST /auth/stream-token` (single use, 60 s). A JWT is refused.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  token?: string;

  @ApiPropertyOptional({
    description:
      'Replay the events after this event id first (as the `Last-Event-ID` header does; a browser EventSource ' +
      'cannot set headers on a new URL).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  lastEventId?: string;
}
