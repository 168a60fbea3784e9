import { ApiProperty } from '@nestjs/swagger';

export class StreamTokenDto {
  @ApiProperty({
    description: 'Single-use token, valid 60 seconds; present it as `?token=` when opening the event stream.',
  })
  token: string;

  @ApiProperty({ format: 'date-time' }) expiresAt: string;
}

export function toStreamTokenResponse(issued: { token: string; expiresAt: Date }): StreamTokenDto {
  return { token: issued.token, expiresAt: issued.expiresAt.toISOString() };
}
