import { ApiProperty } from '@nestjs/swagger';

const RATE = 'A fraction from 0 to 1, rounded to 4 decimals; null when its denominator is 0.';

export class CpiTotalsDto {
  @ApiProperty({ description: 'Traces of the organization.' }) traces: number;
  @ApiProperty({ description: 'Traces now approved.' }) approved: number;
  @ApiProperty({ description: 'Traces now flagged (not yet decided by a human).' }) flagged: number;
  @ApiProperty({ description: 'Traces now blocked.' }) blocked: number;
  @ApiProperty({ description: 'Traces a human verdict through POST /cpi/ingest set to success.' })
  success: number;
  @ApiProperty({
    description:
      'Traces with a human verdict: a review item approved or rejected, or feedback through /cpi/ingest.',
  })
  humanVerdicts: number;
  @ApiProperty({ description: 'Flagged traces with a human verdict (decided flags).' }) decidedFlags: number;
  @ApiProperty({ description: 'Decided flags whose latest verdict is a rejection or a correction.' })
  correctFlags: number;
  @ApiProperty({ description: 'Decided flags whose latest verdict is an approval.' }) falseFlags: number;
  @ApiProperty({ description: 'Traces with humanOverride true (latest feedback a correction).' })
  humanOverrides: number;
}

export class ConfidenceByStatusDto {
  @ApiProperty({ type: Number, nullable: true }) approved: number | null;
  @ApiProperty({ type: Number, nullable: true }) flagged: number | null;
  @ApiProperty({ type: Number, nullable: true }) blocked: number | null;
  @ApiProperty({ type: Number, nullable: true }) success: number | null;
}

export class CpiTrendPointDto {
  @ApiProperty({ example: '2026-11-25', description: 'A UTC day.' }) date: string;
  @ApiProperty({ description: 'Traces created that day.' }) traces: number;
  @ApiProperty({ description: 'Traces whose latest human verdict fell on that day.' }) humanVerdicts: number;
  @ApiProperty({ description: 'Of those, decided flags.' }) decidedFlags: number;
  @ApiProperty({ type: Number, nullable: true, description: RATE }) correctFlagRate: number | null;
  @ApiProperty({ type: Number, nullable: true, description: RATE }) falseFlagRate: number | null;
  @ApiProperty({ type: Number, nullable: true, description: RATE }) humanOverrideRate: number | null;
}

/** GET /cpi (docs/compliance-officers.md, "Human feedback and the compliance-performance indicators (CPI)"). */
export class CpiRollupDto {
  @ApiProperty({ type: CpiTotalsDto }) totals: CpiTotalsDto;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: `correctFlags / decidedFlags. ${RATE}`,
  })
  correctFlagRate: number | null;
  @ApiProperty({ type: Number, nullable: true, description: `falseFlags / decidedFlags. ${RATE}` })
  falseFlagRate: number | null;
  @ApiProperty({ type: Number, nullable: true, description: `humanOverrides / humanVerdicts. ${RATE}` })
  humanOverrideRate: number | null;
  @ApiProperty({
    type: ConfidenceByStatusDto,
    description: 'Mean confidence of the traces in each current status, 4 decimals; null with no trace.',
  })
  averageConfidenceByStatus: ConfidenceByStatusDto;
  @ApiProperty({
    type: [CpiTrendPointDto],
    description:
      'The last 30 UTC days, oldest first, today last; verdicts count on the day of the latest one.',
  })
  trend: CpiTrendPointDto[];
}

export class CpiAgentDto {
  @ApiProperty() agentId: string;
  @ApiProperty({ type: String, nullable: true, description: 'null when the agent was deleted.' })
  name: string | null;
  @ApiProperty() traces: number;
  @ApiProperty({ description: 'Traces of the agent with a human verdict.' }) humanVerdicts: number;
  @ApiProperty({ description: 'Traces of the agent with humanOverride true.' }) overrides: number;
  @ApiProperty({ type: Number, nullable: true, description: `overrides / traces. ${RATE}` })
  overrideRate: number | null;
}

export class CorrectionReasonDto {
  @ApiProperty({
    description:
      'A feedbackNotes text of traces whose latest feedback is a correction, compared without case or extra ' +
      'white space (first 500 characters).',
  })
  reason: string;
  @ApiProperty() count: number;
}

export class ConfidenceDeltaDto {
  @ApiProperty({ description: 'Corrections that gave a confidence of their own (the sample).' })
  corrections: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Mean confidence of the agent on those traces.' })
  averageOriginal: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Mean confidence the humans gave.' })
  averageCorrected: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'averageCorrected − averageOriginal.' })
  delta: number | null;
}

export class CorrectionDelayDto {
  @ApiProperty({ enum: ['<1h', '1-24h', '1-7d', '>7d'] }) bucket: '<1h' | '1-24h' | '1-7d' | '>7d';
  @ApiProperty() count: number;
}

/**
 * GET /cpi/analytics (docs/compliance-officers.md, "Human feedback and the compliance-performance indicators (CPI)").
 */
export class CpiAnalyticsDto {
  @ApiProperty({
    type: [CpiAgentDto],
    description: 'Agents with traces, most overrides first (then override rate, then id); at most 100.',
  })
  agents: CpiAgentDto[];
  @ApiProperty({ type: [CorrectionReasonDto], description: 'The 10 most frequent correction notes.' })
  topCorrectionReasons: CorrectionReasonDto[];
  @ApiProperty({ type: ConfidenceDeltaDto }) confidenceDelta: ConfidenceDeltaDto;
  @ApiProperty({
    type: [CorrectionDelayDto],
    description:
      'Traces whose latest feedback is a correction, by the time from the trace to its first correction; ' +
      'all four buckets, in this order.',
  })
  timeToCorrection: CorrectionDelayDto[];
}
