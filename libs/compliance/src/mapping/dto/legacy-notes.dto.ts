import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject } from 'class-validator';
import { IfPresent } from '#platform';
import { FRAMEWORKS } from '../catalogues/index.js';
import type { Framework } from '../compliance-mapping.schema.js';

export class ReplaceLegacyNotesDto {
  @ApiPropertyOptional({ enum: FRAMEWORKS, default: 'iso-42001' })
  @IfPresent()
  @IsIn(FRAMEWORKS, { message: `framework must be one of ${FRAMEWORKS.join(', ')}` })
  framework?: Framework;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: 4000 },
    description: 'clauseId → text. Keys must be clause ids of the framework; replaces its whole legacy map.',
    example: { '6.1.4': 'Impact assessment done for the credit model.' },
  })
  @IsObject()
  notes: Record<string, unknown>;
}

export class LegacyNotesDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'clauseId → text: the structured notes’ evidence with the legacy strings merged over it.',
  })
  notes: Record<string, string>;
}
