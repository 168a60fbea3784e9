import { ApiProperty } from '@nestjs/swagger';
import type { UserRow } from './user.schema.js';

export class UserDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ example: 'en' }) locale: string;
  @ApiProperty({ example: 'UTC' }) timezone: string;
  @ApiProperty() mfaEnabled: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

/** The user as responses show it: never a hash or secret. */
export function toUserResponse(row: UserRow): UserDto {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    locale: row.locale,
    timezone: row.timezone,
    mfaEnabled: row.mfaEnabled,
    createdAt: row.createdAt.toISOString(),
  };
}
