import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsString, Matches } from 'class-validator';
import { OBJECT_ID_PATTERN } from '#platform';
import type { SessionRow } from '../../sessions/session.schema.js';
import { SESSION_TIMEOUTS, type SessionTimeout } from '../../users/session-timeout.js';

export class SessionTokenDto {
  @ApiProperty({ description: 'JWT (HS256) for the new session.' }) token: string;
}

export class RevokedCountDto {
  @ApiProperty({ example: 2, description: 'How many live sessions this call revoked.' }) revoked: number;
}

export class RevokeSessionDto {
  @ApiProperty({
    example: '65f1c0ffee0000000000abcd',
    description: 'Session id: the id of the audit entry that opened it (as listed by GET /auth/sessions).',
  })
  @IsString()
  @Matches(OBJECT_ID_PATTERN, { message: 'sessionId must be a 24-character hexadecimal id' })
  sessionId: string;
}

export class SessionDto {
  @ApiProperty({ description: 'Id of the audit entry that opened the session.' }) sessionId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
  @ApiProperty({ type: String, nullable: true }) ip: string | null;
  @ApiProperty({ type: String, nullable: true }) userAgent: string | null;
  @ApiProperty({ description: 'True for the session of the token making this request.' }) current: boolean;
}

export class SessionTimeoutDto {
  @ApiProperty({ enum: SESSION_TIMEOUTS, example: '8h' })
  @IsIn(SESSION_TIMEOUTS, { message: `sessionTimeout must be one of ${SESSION_TIMEOUTS.join(', ')}` })
  sessionTimeout: SessionTimeout;
}

export function toSessionResponse(row: SessionRow, currentJti: string | undefined): SessionDto {
  return {
    sessionId: row.id,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    ip: row.ip,
    userAgent: row.userAgent,
    current: row.jti === currentJti,
  };
}
