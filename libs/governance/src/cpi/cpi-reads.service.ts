import { Injectable } from '@nestjs/common';
import { Clock } from '#platform';
import { AgentsRepository } from '../agents/agents.repository.js';
import { TraceRollups } from '../traces/trace-rollups.js';
import type { TraceStatus } from '../traces/trace.schema.js';
import { CpiReadsRepository, type VerdictCounts } from './cpi-reads.repository.js';
import type { CpiAgentDto, CpiAnalyticsDto, CpiRollupDto, CpiTrendPointDto } from './dto/cpi-reads.dto.js';

const DAY_MS = 86_400_000;
export const TREND_DAYS = 30;
export const MAX_AGENTS = 100;
export const TOP_REASONS = 10;

const round4 = (value: number): number => Math.round(value * 10_000) / 10_000;
/** n / d rounded to 4 decimals, or null when there is nothing to divide by. */
export const rate = (n: number, d: number): number | null => (d > 0 ? round4(n / d) : null);

/**
 * GET /cpi and GET /cpi/analytics: trace counts and confidences from the daily rollups, verdicts from the verdict
 * rollups (over the decided review items and trace_feedback), all summed in SQL.
 * See docs/compliance-officers.md, "Human feedback and the compliance-performance indicators (CPI)";
 * test/cpi-reads.e2e-spec.ts.
 */
@Injectable()
export class CpiReadsService {
  constructor(
    private readonly rollups: TraceRollups,
    private readonly reads: CpiReadsRepository,
    private readonly agents: AgentsRepository,
    private readonly clock: Clock,
  ) {}

  async rollup(organizationId: string): Promise<CpiRollupDto> {
    const today = Math.floor(this.clock.nowMs() / DAY_MS) * DAY_MS;
    const since = new Date(today - (TREND_DAYS - 1) * DAY_MS);
    // By status and by day from one read of the rollups and the open day (every day: the trend takes its own).
    const [[byStatus, byDay], verdicts] = await Promise.all([
      this.rollups.summedEach(organizationId, [['status'], ['day']]),
      this.reads.verdicts(organizationId, since),
    ]);
    const counts = { approved: 0, flagged: 0, blocked: 0, success: 0 };
    const confidence: Record<TraceStatus, number | null> = {
      approved: null,
      flagged: null,
      blocked: null,
      success: null,
    };
    for (const row of byStatus) {
      counts[row.status!] = row.traces;
      confidence[row.status!] = row.traces > 0 ? round4(row.confidenceSum / row.traces) : null;
    }
    const tracesOn = new Map(byDay.map((row) => [row.day!, row.traces]));
    const verdictsOn = new Map(verdicts.days.map((row) => [row.day, row]));
    const trend: CpiTrendPointDto[] = [];
    for (let i = 0; i < TREND_DAYS; i++) {
      const date = new Date(since.getTime() + i * DAY_MS).toISOString().slice(0, 10);
      const day = verdictsOn.get(date);
      trend.push({
        date,
        traces: tracesOn.get(date) ?? 0,
        humanVerdicts: day?.verdicts ?? 0,
        decidedFlags: day?.decidedFlags ?? 0,
        ...rates(day ?? EMPTY),
      });
    }
    const total = verdicts.total;
    return {
      totals: {
        traces: counts.approved + counts.flagged + counts.blocked + counts.success,
        ...counts,
        humanVerdicts: total.verdicts,
        decidedFlags: total.decidedFlags,
        correctFlags: total.correctFlags,
        falseFlags: total.falseFlags,
        humanOverrides: total.overrides,
      },
      ...rates(total),
      averageConfidenceByStatus: confidence,
      trend,
    };
  }

  async analytics(organizationId: string): Promise<CpiAnalyticsDto> {
    const [byAgent, verdicts, reasons, { confidence, delays }] = await Promise.all([
      this.rollups.summed(organizationId, ['agentId', 'humanOverride']),
      this.reads.verdictsByAgent(organizationId),
      this.reads.topCorrectionReasons(organizationId, TOP_REASONS),
      this.reads.corrections(organizationId),
    ]);
    const perAgent = new Map<string, { traces: number; overrides: number }>();
    for (const row of byAgent) {
      const agent = perAgent.get(row.agentId!) ?? { traces: 0, overrides: 0 };
      agent.traces += row.traces;
      if (row.humanOverride) agent.overrides += row.traces;
      perAgent.set(row.agentId!, agent);
    }
    const ranked = [...perAgent.entries()]
      .filter(([, agent]) => agent.traces > 0)
      .map(([agentId, agent]) => ({ agentId, ...agent, overrideRate: rate(agent.overrides, agent.traces) }))
      .sort(
        (a, b) =>
          b.overrides - a.overrides ||
          (b.overrideRate ?? 0) - (a.overrideRate ?? 0) ||
          (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0),
      )
      .slice(0, MAX_AGENTS);
    const names = await this.agents.names(
      organizationId,
      ranked.map((agent) => agent.agentId),
    );
    const agents: CpiAgentDto[] = ranked.map((agent) => ({
      agentId: agent.agentId,
      name: names.get(agent.agentId) ?? null,
      traces: agent.traces,
      humanVerdicts: verdicts.get(agent.agentId) ?? 0,
      overrides: agent.overrides,
      overrideRate: agent.overrideRate,
    }));
    const { averageOriginal, averageCorrected } = confidence;
    return {
      agents,
      topCorrectionReasons: reasons,
      confidenceDelta: {
        corrections: confidence.corrections,
        averageOriginal: averageOriginal === null ? null : round4(averageOriginal),
        averageCorrected: averageCorrected === null ? null : round4(averageCorrected),
        delta:
          averageOriginal === null || averageCorrected === null
            ? null
            : round4(averageCorrected - averageOriginal),
      },
      timeToCorrection: (['<1h', '1-24h', '1-7d', '>7d'] as const).map((bucket) => ({
        bucket,
        count: delays[bucket],
      })),
    };
  }
}

const EMPTY: VerdictCounts = { verdicts: 0, decidedFlags: 0, correctFlags: 0, falseFlags: 0, overrides: 0 };

function rates(counts: VerdictCounts): Pick<
  CpiTrendPointDto,
  'correctFlagRate' | 'falseFlagRate' | 'humanOverrideRate'
> {
  return {
    correctFlagRate: rate(counts.correctFlags, counts.decidedFlags),
    falseFlagRate: rate(counts.falseFlags, counts.decidedFlags),
    humanOverrideRate: rate(counts.overrides, counts.verdicts),
  };
}
