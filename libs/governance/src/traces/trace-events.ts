import type { AuditAnnouncement } from '#platform';

/** The audit events of ingestion, which are also its domain events (one entry per trace, written once). */
export const TRACE_AUDIT_EVENTS = ['trace.approved', 'trace.flagged', 'trace.blocked', 'trace.auto_approved'];

/**
 * The event of a trace's audit entry: `trace.approved|flagged|blocked` (an auto-approved trace is `trace.approved`
 * with `autoApprovedBy`), its data the outcome of ingestion, not the trace's contents.
 */
export const traceEventOf: AuditAnnouncement = (entry) => {
  const metadata = entry.metadata as {
    agentId?: string;
    confidence?: number;
    policyIds?: string[];
    reviewItemId?: string;
    autoApprovedBy?: string;
    piiEntities?: string[];
  };
  const status =
    entry.eventType === 'trace.auto_approved' ? 'approved' : entry.eventType.slice('trace.'.length);
  return {
    type: `trace.${status}`,
    agentId: metadata.agentId ?? null,
    data: {
      traceId: entry.targetId,
      agentId: metadata.agentId ?? null,
      status,
      confidence: metadata.confidence ?? null,
      policyIds: metadata.policyIds ?? [],
      reviewItemId: metadata.reviewItemId ?? null,
      ...(metadata.autoApprovedBy ? { autoApprovedBy: metadata.autoApprovedBy } : {}),
      ...(metadata.piiEntities ? { piiEntities: metadata.piiEntities } : {}),
    },
  };
};
