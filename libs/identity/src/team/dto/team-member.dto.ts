import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { IfPresent, type Role, ROLES } from '#platform';
import type { MemberView } from '../../organizations/members.repository.js';

export class TeamMemberDto {
  @ApiProperty() userId: string;
  @ApiProperty({ example: 'Ada Lovelace' }) name: string;
  @ApiProperty({ format: 'email' }) email: string;
  @ApiProperty({ enum: ROLES }) role: Role;
  @ApiProperty({ format: 'date-time', description: 'When the membership was created.' }) joinedAt: string;
  @ApiProperty({ description: 'False while the member is suspended.' }) isActive: boolean;
  @ApiProperty() mfaEnabled: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '203.0.113.7',
    description:
      'The address of the member’s last sign-in into this organization (never another organization’s).',
  })
  lastLoginIp: string | null;
  @ApiProperty({
    format: 'date-time',
    description: 'When the user account was created; may precede joinedAt.',
  })
  createdAt: string;
}

export class ChangeRoleDto {
  @ApiProperty({
    enum: ROLES,
    description: 'Several owners are allowed. Only an owner may grant the owner role or change an owner.',
  })
  @IsIn(ROLES, { message: `role must be one of: ${ROLES.join(', ')}` })
  role: Role;
}

/** The body of the suspend route is optional; when sent it can only say what the route does. */
export class SuspendMemberDto {
  @ApiPropertyOptional({
    enum: [false],
    description: 'Optional; only `false` is accepted. Reactivation has its own route.',
  })
  @IfPresent()
  @IsIn([false], { message: 'isActive must be false; use /reactivate to reactivate a member' })
  isActive?: false;
}

export function toTeamMemberResponse(row: MemberView): TeamMemberDto {
  return {
    userId: row.userId,
    name: row.name,
    email: row.email,
    role: row.role,
    joinedAt: row.joinedAt.toISOString(),
    isActive: row.isActive,
    mfaEnabled: row.mfaEnabled,
    lastLoginIp: row.lastLoginIp,
    createdAt: row.createdAt.toISOString(),
  };
}
