import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, Clock, SCHEMA_VERSIONS } from '#platform';
import {
  AgentsRepository,
  AuditService,
  type ChainState,
  PoliciesRepository,
  ReviewItemsRepository,
  TraceRollups,
  TracesRepository,
} from '#governance';
import { OrganizationsService } from '#identity';
import type { FriaStatus } from '../fria/fria.schema.js';
import { FriaRepository } from '../fria/fria.repository.js';
import { clockOf } from '../incidents/incident-clock.js';
import type { IncidentCategory } from '../incidents/incident.schema.js';
import { AlertsRepository } from '../alerts/alerts.repository.js';
import type { AlertComparison, AlertMetric, AlertState } from '../alerts/alert.schema.js';
import { IncidentsRepository } from '../incidents/incidents.repository.js';
import type { ClauseStatus, Framework } from '../mapping/compliance-mapping.schema.js';
import { ComplianceMappingService } from '../mapping/compliance-mapping.service.js';
import type { Coverage } from '../mapping/coverage.js';

/** Trace statuses in the order the documents show them. */
export const TRACE_STATUSES = ['approved', 'success', 'flagged', 'blocked'] as const;
export type ReportTraceStatus = (typeof TRACE_STATUSES)[number];
const FRIA_STATUSES: readonly FriaStatus[] = ['draft', 'review', 'approved', 'archived'];

/** Open incidents the report lists one by one; the rest are counted. */
export const REPORT_INCIDENTS_MAX = 50;
/** Traces below this confidence are "low confidence" in the digest. */
export const LOW_CONFIDENCE_BELOW = 0.5;

export interface Period {
  from: Date;
  to: Date;
}

export interface StatusVolume {
  status: ReportTraceStatus;
  traces: number;
  /** null when the status has no trace in the period. */
  averageConfidence: number | null;
}

export interface IncidentClockRow {
  id: string;
  title: string;
  category: IncidentCategory;
  awareAt: Date;
  deadlineAt: Date;
  timeLeftSeconds: number;
  overdue: boolean;
}

/**
 * Everything the compliance PDF shows (docs/compliance-officers.md, "The compliance PDF"), each figure aggregated in
 * SQL.
 */
export interface ComplianceReportData {
  organization: { id: string; name: string };
  period: Period;
  generatedAt: Date;
  schemaVersion: string;
  volume: {
    total: number;
    byStatus: StatusVolume[];
    daily: Array<{ day: string } & Record<ReportTraceStatus, number>>;
  };
  policies: Array<{ id: string; name: string; outcome: 'block' | 'flag'; matched: number }>;
  review: { pending: number; escalated: number; oldest: Date | null };
  chain: ChainState;
  incidents: { open: number; overdue: number; rows: IncidentClockRow[] };
  mapping: Array<{
    framework: Framework;
    coverage: Coverage;
    clauses: Array<{ clauseId: string; title: string; status: ClauseStatus }>;
  }>;
  frias: Array<{ status: FriaStatus; count: number }>;
}

/**
 * What a scheduled report's digest shows (docs/compliance-officers.md, "Scheduled reports"); sections absent when
 * their flag is off.
 */
export interface DigestData {
  organization: { id: string; name: string };
  period: Period;
  metrics?: { total: number; byStatus: StatusVolume[]; review: { pending: number; escalated: number } };
  topAgents?: Array<{ id: string; name: string; traces: number; flagRate: number; blockRate: number }>;
  alerts?: {
    blockedTraces: number;
    openIncidents: number;
    overdueIncidents: number;
    chainValid: boolean;
    /** The alert rules' transitions of the period, oldest first (at most DIGEST_TRANSITIONS_MAX), and how many. */
    transitions: { total: number; rows: DigestTransition[] };
  };
  lowConfidence?: Array<{
    id: string;
    agentName: string;
    confidence: number;
    status: string;
    createdAt: Date;
  }>;
}

export interface DigestTransition {
  alertName: string;
  metric: AlertMetric;
  to: AlertState;
  value: number;
  threshold: number;
  comparison: AlertComparison;
  at: Date;
}

/** Transitions listed in a digest at most; the rest are counted. */
export const DIGEST_TRANSITIONS_MAX = 20;

export interface DigestSections {
  includeMetrics: boolean;
  includeTopAgents: boolean;
  includeAlerts: boolean;
  includeLowConf: boolean;
}

/**
 * The figures of the compliance PDF and of the digest e-mail, read through the owning modules' repositories. Trace
 * counts come from the daily rollups (live counts for the open days and the period's partial edges), policy
 * matches from the partial index of matched traces, the chain from a streamed verification: no trace is loaded.
 */
@Injectable()
export class ReportFigures {
  constructor(
    private readonly rollups: TraceRollups,
    private readonly traces: TracesRepository,
    private readonly policies: PoliciesRepository,
    private readonly review: ReviewItemsRepository,
    private readonly audit: AuditService,
    private readonly agents: AgentsRepository,
    private readonly incidents: IncidentsRepository,
    private readonly alerts: AlertsRepository,
    private readonly frias: FriaRepository,
    private readonly mapping: ComplianceMappingService,
    private readonly organizations: OrganizationsService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'auditFullVerifyMaxAgeMs'>,
  ) {}

  async compliance(organizationId: string, period: Period): Promise<ComplianceReportData> {
    const now = this.clock.now();
    // The period's `to` is exclusive for the SQL ranges; the rollups take an inclusive bound.
    const filter = { from: period.from, to: new Date(period.to.getTime() - 1) };
    const [name, byStatus, daily, policies, matches, review, chain, incidents, mapping, frias] =
      await Promise.all([
        this.organizations.nameOf(organizationId),
        this.rollups.summed(organizationId, ['status'], filter),
        this.rollups.summed(organizationId, ['day', 'status'], filter),
        this.policies.listActiveForEvaluation(organizationId),
        this.traces.policyMatches(organizationId, period.from, period.to),
        this.review.backlog(organizationId),
        this.audit.chainState(organizationId, this.config.auditFullVerifyMaxAgeMs),
        this.incidents.openByDeadline(organizationId, now, REPORT_INCIDENTS_MAX),
        this.mapping.clauseTable(organizationId),
        this.frias.countByStatus(organizationId),
      ]);
    const volume = volumeOf(byStatus);
    const days = new Map<string, { day: string } & Record<ReportTraceStatus, number>>();
    for (const row of daily) {
      const day = days.get(row.day!) ?? { day: row.day!, approved: 0, success: 0, flagged: 0, blocked: 0 };
      day[row.status as ReportTraceStatus] += row.traces;
      days.set(row.day!, day);
    }
    return {
      organization: { id: organizationId, name: name ?? organizationId },
      period,
      generatedAt: now,
      schemaVersion: SCHEMA_VERSIONS[SCHEMA_VERSIONS.length - 1]!.version,
      volume: { ...volume, daily: [...days.values()].sort((a, b) => a.day.localeCompare(b.day)) },
      policies: policies.map((p) => ({
        id: p.id,
        name: p.name,
        outcome: p.outcome,
        matched: matches.get(p.id) ?? 0,
      })),
      review,
      chain,
      incidents: {
        open: incidents.open,
        overdue: incidents.overdue,
        rows: incidents.rows.map((i) => {
          const clock = clockOf(i.status, i.deadlineAt, now);
          return {
            id: i.id,
            title: i.title,
            category: i.category,
            awareAt: i.awareAt,
            deadlineAt: i.deadlineAt,
            timeLeftSeconds: clock.timeLeftSeconds ?? 0,
            overdue: clock.overdue,
          };
        }),
      },
      mapping,
      frias: FRIA_STATUSES.map((status) => ({ status, count: frias.get(status) ?? 0 })),
    };
  }

  async digest(organizationId: string, period: Period, sections: DigestSections): Promise<DigestData> {
    const filter = { from: period.from, to: new Date(period.to.getTime() - 1) };
    const name = await this.organizations.nameOf(organizationId);
    const data: DigestData = { organization: { id: organizationId, name: name ?? organizationId }, period };
    const byStatus =
      sections.includeMetrics || sections.includeAlerts
        ? volumeOf(await this.rollups.summed(organizationId, ['status'], filter))
        : undefined;
    if (sections.includeMetrics) {
      const review = await this.review.backlog(organizationId);
      data.metrics = { ...byStatus!, review: { pending: review.pending, escalated: review.escalated } };
    }
    if (sections.includeTopAgents) {
      const rows = await this.rollups.summed(organizationId, ['agentId', 'status'], filter);
      const perAgent = new Map<string, { traces: number; flagged: number; blocked: number }>();
      for (const row of rows) {
        const agent = perAgent.get(row.agentId!) ?? { traces: 0, flagged: 0, blocked: 0 };
        agent.traces += row.traces;
        if (row.status === 'flagged') agent.flagged += row.traces;
        if (row.status === 'blocked') agent.blocked += row.traces;
        perAgent.set(row.agentId!, agent);
      }
      const top = [...perAgent.entries()]
        .sort((a, b) => b[1].traces - a[1].traces || a[0].localeCompare(b[0]))
        .slice(0, 5);
      const names = await this.agents.names(
        organizationId,
        top.map(([id]) => id),
      );
      data.topAgents = top.map(([id, a]) => ({
        id,
        name: names.get(id) ?? id,
        traces: a.traces,
        flagRate: a.traces > 0 ? a.flagged / a.traces : 0,
        blockRate: a.traces > 0 ? a.blocked / a.traces : 0,
      }));
    }
    if (sections.includeAlerts) {
      const now = this.clock.now();
      const [incidents, chain, transitions] = await Promise.all([
        this.incidents.openByDeadline(organizationId, now, 0),
        this.audit.chainState(organizationId, this.config.auditFullVerifyMaxAgeMs),
        this.alerts.transitionsBetween(organizationId, period.from, period.to, DIGEST_TRANSITIONS_MAX),
      ]);
      data.alerts = {
        blockedTraces: byStatus!.byStatus.find((s) => s.status === 'blocked')!.traces,
        openIncidents: incidents.open,
        overdueIncidents: incidents.overdue,
        chainValid: chain.valid,
        transitions: {
          total: transitions.total,
          rows: transitions.rows.map((t) => ({
            alertName: t.alertName,
            metric: t.metric,
            to: t.toState,
            value: t.value,
            threshold: t.threshold,
            comparison: t.comparison,
            at: t.createdAt,
          })),
        },
      };
    }
    if (sections.includeLowConf) {
      const rows = await this.traces.lowConfidence(
        organizationId,
        period.from,
        period.to,
        LOW_CONFIDENCE_BELOW,
        10,
      );
      const names = await this.agents.names(organizationId, [...new Set(rows.map((r) => r.agentId))]);
      data.lowConfidence = rows.map((r) => ({
        id: r.id,
        agentName: names.get(r.agentId) ?? r.agentId,
        confidence: r.confidence,
        status: r.status,
        createdAt: r.createdAt,
      }));
    }
    return data;
  }
}

function volumeOf(rows: ReadonlyArray<{ status?: string; traces: number; confidenceSum: number }>): {
  total: number;
  byStatus: StatusVolume[];
} {
  const byStatus = TRACE_STATUSES.map((status) => {
    const row = rows.find((r) => r.status === status);
    const traces = row?.traces ?? 0;
    return { status, traces, averageConfidence: traces > 0 ? row!.confidenceSum / traces : null };
  });
  return { total: byStatus.reduce((sum, s) => sum + s.traces, 0), byStatus };
}
