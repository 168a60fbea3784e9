import { describe, expect, it } from 'vitest';
import { Metrics } from './metrics.js';

const config = (enabled: boolean) => ({ metrics: { enabled, host: '127.0.0.1' } });

describe('Metrics', () => {
  it('makes each metric once by name, prefixed, and refuses one name for two kinds', async () => {
    const metrics = new Metrics(config(true));
    const a = metrics.counter({ name: 'governance_things_total', help: 'Things.', labelNames: ['kind'] });
    expect(metrics.counter({ name: 'governance_things_total', help: 'Things.', labelNames: ['kind'] })).toBe(a);
    a.labels('x').inc(2);
    expect(await metrics.text()).toContain('governance_things_total{kind="x"} 2');
    expect(() => metrics.gauge({ name: 'governance_things_total', help: 'Things.' })).toThrow(/another kind/);
    expect(() => metrics.counter({ name: 'things_total', help: 'Things.' })).toThrow(/governance_/);
  });

  it('under METRICS=off, gives stand-ins that take every call and record nothing', async () => {
    const metrics = new Metrics(config(false));
    expect(metrics.enabled).toBe(false);
    const counter = metrics.counter({ name: 'governance_things_total', help: 'Things.', labelNames: ['kind'] });
    const gauge = metrics.gauge({ name: 'governance_level', help: 'Level.' });
    const histogram = metrics.histogram({ name: 'governance_wait_seconds', help: 'Wait.', labelNames: ['kind'] });
    counter.labels('x').inc(3);
    counter.inc();
    gauge.set(4);
    gauge.inc();
    gauge.dec();
    histogram.labels('x').observe(0.2);
    expect(histogram.startTimer()()).toBe(0);
    expect(metrics.registry.getMetricsAsArray()).toEqual([]);
    expect((await metrics.text()).trim()).toBe('');
  });

  it('is on when made without a configuration (schedulers and specs made by hand)', () => {
    expect(new Metrics().enabled).toBe(true);
  });
});
