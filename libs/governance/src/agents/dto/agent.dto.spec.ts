import { describe, expect, it } from 'vitest';
import {
  type AgentTraceStats,
  type AgentView,
  toAgentAnalyticsResponse,
  toAgentResponse,
} from './agent.dto.js';

const none: AgentTraceStats = {
  total: 0,
  approved: 0,
  flagged: 0,
  blocked: 0,
  success: 0,
  averageConfidence: null,
  humanOverrides: 0,
  lastTraceAt: null,
};

describe('toAgentAnalyticsResponse', () => {
  it('reports null averages and rates when the agent has no traces', () => {
    expect(toAgentAnalyticsResponse(none)).toEqual({
      totalTraces: 0,
      byStatus: { approved: 0, flagged: 0, blocked: 0, success: 0 },
      averageConfidence: null,
      humanOverrideRate: null,
      lastTraceAt: null,
    });
  });

  it('rounds the mean confidence and the override share to two decimals', () => {
    const last = new Date('2026-04-11T10:00:00.000Z');
    expect(
      toAgentAnalyticsResponse({
        ...none,
        total: 3,
        approved: 2,
        flagged: 1,
        averageConfidence: 0.7166666,
        humanOverrides: 1,
        lastTraceAt: last,
      }),
    ).toEqual({
      totalTraces: 3,
      byStatus: { approved: 2, flagged: 1, blocked: 0, success: 0 },
      averageConfidence: 0.72,
      humanOverrideRate: 0.33,
      lastTraceAt: '2026-04-11T10:00:00.000Z',
    });
  });
});

describe('toAgentResponse', () => {
  it('names the public fields only (no organization id)', () => {
    const at = new Date('2026-04-11T10:00:00.000Z');
    const row: AgentView = {
      id: 'a'.repeat(24),
      organizationId: 'b'.repeat(24),
      name: 'Bot',
      description: null,
      createdBy: 'c'.repeat(24),
      createdAt: at,
      updatedAt: at,
      keyPrefix: 'svc_agent_abcdefghijkl',
    };
    expect(toAgentResponse(row)).toEqual({
      id: row.id,
      name: 'Bot',
      description: null,
      keyPrefix: 'svc_agent_abcdefghijkl',
      createdBy: row.createdBy,
      createdAt: at.toISOString(),
      updatedAt: at.toISOString(),
    });
  });
});
