import { describe, expect, it } from 'vitest';
import { transitionText } from './alert-evaluator.job.js';
import { crosses, formatMetric } from './alert-metrics.js';

describe('crosses', () => {
  it('fires strictly above (gt) or strictly below (lt) the threshold', () => {
    expect(crosses(0.31, 'gt', 0.3)).toBe(true);
    expect(crosses(0.3, 'gt', 0.3)).toBe(false);
    expect(crosses(0, 'lt', 1)).toBe(true);
    expect(crosses(1, 'lt', 1)).toBe(false);
  });
});

describe('formatMetric', () => {
  it('shows rates in percent and counts as numbers', () => {
    expect(formatMetric('block_rate', 0.4)).toBe('40.0 %');
    expect(formatMetric('low_confidence_rate', 1 / 3)).toBe('33.3 %');
    expect(formatMetric('trace_volume', 12500)).toBe('12,500');
    expect(formatMetric('review_backlog', 3)).toBe('3');
  });
});

describe('transitionText', () => {
  const rule = {
    name: 'Payments blocks',
    metric: 'block_rate' as const,
    agentId: 'a'.repeat(24),
    comparison: 'gt' as const,
    threshold: 0.3,
    windowMinutes: 60,
  };

  it('says what was measured, over which window, against which threshold', () => {
    expect(transitionText(rule, 'firing', 0.4)).toEqual({
      subject: 'Alert triggered: Payments blocks',
      text:
        `Alert "Payments blocks" triggered: the block rate for agent ${'a'.repeat(24)} over the last 60 minutes ` +
        'is 40.0 %, above the threshold of 30.0 %.',
    });
    expect(transitionText({ ...rule, agentId: null }, 'ok', 0.1).text).toBe(
      'Alert "Payments blocks" resolved: the block rate over the last 60 minutes is 10.0 %, no longer above the ' +
        'threshold of 30.0 %.',
    );
  });

  it('reads a state metric as of now', () => {
    const backlog = { ...rule, metric: 'review_backlog' as const, agentId: null, threshold: 20 };
    expect(transitionText(backlog, 'firing', 25).text).toBe(
      'Alert "Payments blocks" triggered: the review backlog now is 25, above the threshold of 20.',
    );
  });
});
