import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import type { OrganizationRow } from '../organization.schema.js';

export class DeleteOrganizationDto {
  @ApiProperty({
    example: 'Analytical Engines Ltd',
    maxLength: 200,
    description: 'The organization’s name, exactly as it is (case and spaces included): the confirmation.',
  })
  @IsString()
  @MaxLength(200)
  confirmName: string;
}

export class OrganizationDeletionDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'date-time', description: 'When the deletion was requested; access ended then.' })
  deletedAt: string;
  @ApiProperty({
    format: 'date-time',
    description:
      'When the grace period (ORG_DELETION_GRACE_DAYS) ends: the operator can restore the organization until then; ' +
      'its data is erased after it.',
  })
  eraseAfter: string;
}

export function toOrganizationDeletionResponse(row: OrganizationRow): OrganizationDeletionDto {
  return {
    id: row.id,
    name: row.name,
    deletedAt: row.deletedAt!.toISOString(),
    eraseAfter: row.eraseAfter!.toISOString(),
  };
}
