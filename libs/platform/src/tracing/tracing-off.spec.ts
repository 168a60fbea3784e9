import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createRootLogger } from '../logging/logging.js';
import {
  activeLogTraceFields,
  bindTraced,
  flushTracing,
  tracedContext,
  tracingEnabled,
  withSpan,
} from './tracing.js';

/** No SDK is registered in this file's process, as in a service started without OTEL_* variables. */
describe('tracing off (no SDK registered)', () => {
  it('runs work as it is, with no span and no settings read', async () => {
    expect(tracingEnabled()).toBe(false);
    let settingsRead = false;
    const span = await withSpan(
      'unused',
      async (s) => s,
      () => {
        settingsRead = true;
        return {};
      },
    );
    expect(span).toBeUndefined();
    expect(settingsRead).toBe(false);
    await expect(withSpan('failing', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
  });

  it('captures no context and binds nothing', async () => {
    const fn = () => 1;
    expect(tracedContext()).toBeUndefined();
    expect(bindTraced(fn)).toBe(fn);
    await expect(flushTracing()).resolves.toBeUndefined();
  });

  it('writes no trace ids on log lines', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    await withSpan('unused', async () => createRootLogger({ logLevel: 'info' }, sink).info('inside'));
    expect(activeLogTraceFields()).toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(Object.keys(lines[0]!).filter((key) => /^(trace|span)_/.test(key))).toEqual([]);
  });
});
