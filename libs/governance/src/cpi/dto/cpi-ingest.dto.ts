import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsEmail, IsIn, IsString, MaxLength, MinLength } from 'class-validator';
import { IfPresent } from '#platform';
import type { FeedbackAction } from '../cpi.schema.js';

export const FEEDBACK_ACTIONS: readonly FeedbackAction[] = ['approve', 'correct'];

/**
 * Body of POST /cpi/ingest (docs/compliance-officers.md,
 * "Human feedback and the compliance-performance indicators (CPI)"). correctedDecision is checked in the service: it
 * is a string or an object.
 */
export class CpiIngestDto {
  @ApiProperty({ description: 'Id of a trace of the key’s organization.' })
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  traceId!: string;

  @ApiPropertyOptional({
    enum: FEEDBACK_ACTIONS,
    description: 'approve or correct; when absent, a correctedDecision means correct.',
  })
  @IfPresent()
  @IsIn(FEEDBACK_ACTIONS, { message: `action must be one of ${FEEDBACK_ACTIONS.join(', ')}` })
  action?: FeedbackAction;

  @ApiPropertyOptional({
    description:
      'The human decision: a string of 1–200 characters, or {decision: string 1–200, confidence?: number 0–1}. ' +
      'Required with action correct, refused with action approve.',
    oneOf: [
      { type: 'string', minLength: 1, maxLength: 200 },
      {
        type: 'object',
        required: ['decision'],
        properties: {
          decision: { type: 'string', minLength: 1, maxLength: 200 },
          confidence: { type: 'number', minimum: 0, maximum: 1 },
        },
      },
    ],
  })
  @IfPresent()
  @IsDefined()
  correctedDecision?: unknown;

  @ApiPropertyOptional({ maxLength: 4000, description: 'Why the human decided so (the correction reason).' })
  @IfPresent()
  @IsString()
  @MaxLength(4000)
  feedbackNotes?: string;

  @ApiPropertyOptional({ maxLength: 320, description: 'E-mail of the human who gave the verdict.' })
  @IfPresent()
  @IsEmail()
  @MaxLength(320)
  userEmail?: string;
}

export class CpiIngestResultDto {
  @ApiProperty({ description: 'The trace the verdict was applied to.' })
  traceId!: string;

  @ApiProperty({ enum: ['success'], description: 'The trace’s status after the verdict (always success).' })
  status!: 'success';

  @ApiProperty({ description: 'True when a human corrected the decision, false when a human approved it.' })
  humanOverride!: boolean;

  @ApiProperty({ enum: FEEDBACK_ACTIONS, description: 'The verdict applied.' })
  action!: FeedbackAction;
}
