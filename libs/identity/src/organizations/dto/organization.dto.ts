import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { PLAN_FEATURES } from '#platform';
import type { OrganizationRow } from '../organization.schema.js';

export class OrganizationDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['sandbox', 'scale', 'governance', 'enterprise', 'custom'] }) plan: string;
  @ApiProperty({ type: [String], description: 'Features the plan unlocks.', example: ['friaWizard', 'sso'] })
  features: string[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class UpdateOrganizationDto {
  @ApiProperty({ example: 'Analytical Engines Ltd', maxLength: 200 })
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;
}

export function toOrganizationResponse(row: OrganizationRow): OrganizationDto {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    features: [...PLAN_FEATURES[row.plan]],
    createdAt: row.createdAt.toISOString(),
  };
}
