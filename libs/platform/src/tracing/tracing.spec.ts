import { Writable } from 'node:stream';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { node } from '@opentelemetry/sdk-node';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createRootLogger } from '../logging/logging.js';
import {
  activeLogTraceFields,
  bindTraced,
  failActiveSpan,
  linkTo,
  tracedContext,
  tracingEnabled,
  withSpan,
} from './tracing.js';

// Registered before the first question to tracing.ts, as the process's entry does (this file has its own process).
const exporter = new node.InMemorySpanExporter();
const provider = new node.NodeTracerProvider({ spanProcessors: [new node.SimpleSpanProcessor(exporter)] });
provider.register();

const spans = () => exporter.getFinishedSpans();
const spanNamed = (name: string) => spans().find((span) => span.name === name)!;

describe('tracing on (an SDK registered before the application)', () => {
  beforeEach(() => exporter.reset());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  it('knows that it traces', () => {
    expect(tracingEnabled()).toBe(true);
  });

  it('runs work in a span that its nested spans are children of', async () => {
    const result = await withSpan('outer', (outer) => withSpan('inner', async (inner) => [outer, inner]), {
      attributes: { 'governance.test': 1 },
    });
    expect(result.every((span) => span !== undefined)).toBe(true);
    const outer = spanNamed('outer');
    expect(outer.attributes['governance.test']).toBe(1);
    expect(spanNamed('inner').parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
  });

  it('records a throw as the span’s error, by its class alone, and throws it on', async () => {
    const thrown = Object.assign(new Error('refused for jane@example.com'), { code: 'EAUTH' });
    await expect(withSpan('failing', () => Promise.reject(thrown))).rejects.toBe(thrown);
    const failing = spanNamed('failing');
    expect(failing.status).toEqual({ code: SpanStatusCode.ERROR, message: 'EAUTH' });
    expect(failing.events.map((e) => e.name)).toEqual(['exception']);
    expect(JSON.stringify([failing.status, failing.attributes, failing.events])).not.toContain('jane');
  });

  it('parents a span on a context captured earlier, and links others', async () => {
    const [first, second] = await Promise.all(
      ['request 1', 'request 2'].map((name) => withSpan(name, async () => tracedContext())),
    );
    // Work started under a third span is still traced under the first request, as the trace writer's batch is.
    await withSpan('unrelated', () =>
      withSpan(
        'batch',
        async () => undefined,
        () => ({ parent: first, links: [linkTo(second)!] }),
      ),
    );
    const batch = spanNamed('batch');
    expect(batch.parentSpanContext?.spanId).toBe(spanNamed('request 1').spanContext().spanId);
    expect(batch.links.map((link) => link.context.spanId)).toEqual([
      spanNamed('request 2').spanContext().spanId,
    ]);
  });

  it('traces work bound to a span under that span when it runs later, elsewhere', async () => {
    let later: () => Promise<void> = () => Promise.resolve();
    await withSpan('committing', async () => {
      later = bindTraced(() => withSpan('after commit', async () => undefined));
    });
    await withSpan('elsewhere', () => later());
    expect(spanNamed('after commit').parentSpanContext?.spanId).toBe(
      spanNamed('committing').spanContext().spanId,
    );
  });

  it('marks the active span failed for a failure that is handled, not thrown, without its message', async () => {
    // nodemailer's rejection names the recipients the server refused.
    const rejected = Object.assign(
      new Error("Can't send mail - all recipients were rejected: 550 5.1.1 <jane.doe@example.com>"),
      { code: 'EENVELOPE' },
    );
    await withSpan('handled', async () => failActiveSpan(rejected));
    const handled = spanNamed('handled');
    expect(handled.status).toEqual({ code: SpanStatusCode.ERROR, message: 'EENVELOPE' });
    expect(handled.attributes['error.type']).toBe('EENVELOPE');
    expect(handled.events.map((e) => e.attributes)).toEqual([
      { 'exception.type': 'EENVELOPE', 'exception.message': '[Redacted]' },
    ]);
  });

  it('writes the active span’s ids on log lines, and none outside a span', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = createRootLogger({ logLevel: 'info' }, sink);
    const ids = await withSpan('logging', async () => {
      logger.info('inside');
      return activeLogTraceFields();
    });
    logger.info('outside');
    const logging = spanNamed('logging').spanContext();
    expect(ids).toEqual({ trace_id: logging.traceId, span_id: logging.spanId, trace_flags: '01' });
    expect(lines[0]).toMatchObject({ msg: 'inside', ...ids });
    expect(lines[1]).not.toHaveProperty('trace_id');
    expect(lines[1]).not.toHaveProperty('span_id');
  });
});
