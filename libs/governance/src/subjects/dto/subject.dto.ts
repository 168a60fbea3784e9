import { ApiProperty } from '@nestjs/swagger';
import type { SubjectHoldRow } from '../subjects.repository.js';
import type { SubjectErasureRow, SubjectErasureStatus } from '../subject.schema.js';

const ERASURE_STATUSES: SubjectErasureStatus[] = ['running', 'done'];

export class SubjectErasureStartedDto {
  @ApiProperty({ description: 'The erasure job; GET /subjects/{ref}/erasure shows its progress.' })
  jobId: string;
  @ApiProperty({ enum: ERASURE_STATUSES }) status: SubjectErasureStatus;
}

export class SubjectErasureDto {
  @ApiProperty() jobId: string;
  @ApiProperty({
    enum: ERASURE_STATUSES,
    description: '`running` until every trace of the subject is erased.',
  })
  status: SubjectErasureStatus;
  @ApiProperty({ description: 'Traces whose content this job erased so far.' }) tracesErased: number;
  @ApiProperty({
    description:
      'A legal hold was placed while the job ran: it stopped there (status `done`); what it had erased stays erased.',
  })
  stoppedByHold: boolean;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) finishedAt: string | null;
}

export class SubjectHoldDto {
  @ApiProperty({ description: 'Whether the subject is on legal hold (false once lifted).' }) held: boolean;
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'When the hold was placed; null once lifted.',
  })
  since: string | null;
}

export function toErasureResponse(row: SubjectErasureRow): SubjectErasureDto {
  return {
    jobId: row.id,
    status: row.status,
    tracesErased: row.tracesErased,
    stoppedByHold: row.stoppedByHold,
    startedAt: row.startedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

export const toHoldResponse = (row: SubjectHoldRow): SubjectHoldDto => ({
  held: true,
  since: row.createdAt.toISOString(),
});
