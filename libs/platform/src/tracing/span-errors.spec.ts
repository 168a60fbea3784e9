import { SpanStatusCode } from '@opentelemetry/api';
import { tracing } from '@opentelemetry/sdk-node';
import { describe, expect, it } from 'vitest';
import { recordSpanError, spanErrorType, withholdErrorDetails } from './span-errors.js';

// Spans of a provider of this file's own, not registered globally.
const exporter = new tracing.InMemorySpanExporter();
const tracer = new tracing.BasicTracerProvider({
  spanProcessors: [new tracing.SimpleSpanProcessor(exporter)],
}).getTracer('span-errors');

/** Runs `record` on a new span, ends it and returns it as exported. */
function exported(record: (span: ReturnType<typeof tracer.startSpan>) => void) {
  const span = tracer.startSpan('failing');
  record(span);
  span.end();
  return exporter.getFinishedSpans().at(-1)!;
}

/** What nodemailer rejects a message with when the server refuses its recipients. */
const rejected = () =>
  Object.assign(
    new Error("Can't send mail - all recipients were rejected: 550 5.1.1 <jane.doe@example.com>"),
    {
      code: 'EENVELOPE',
    },
  );

describe('spanErrorType', () => {
  it('is the error’s code, else its name, else Error', () => {
    expect(spanErrorType(rejected())).toBe('EENVELOPE');
    expect(spanErrorType(Object.assign(new Error('duplicate key'), { name: 'error', code: '23505' }))).toBe(
      '23505',
    );
    expect(spanErrorType(new TypeError('x is not a function'))).toBe('TypeError');
    expect(spanErrorType('Connection: connect ECONNREFUSED 10.0.0.7:443')).toBe('Error');
    expect(spanErrorType(undefined)).toBe('Error');
  });

  it('takes no code or name that is not an identifier', () => {
    expect(spanErrorType(Object.assign(new Error('m'), { code: 'refused for jane@example.com' }))).toBe(
      'Error',
    );
    expect(spanErrorType({ name: 'a name with spaces', code: { nested: true } })).toBe('Error');
  });
});

describe('recordSpanError', () => {
  it('records the error’s class and a fixed message, never its message or stack', () => {
    const span = exported((s) => recordSpanError(s, rejected()));
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'EENVELOPE' });
    expect(span.attributes['error.type']).toBe('EENVELOPE');
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
      ['exception', { 'exception.type': 'EENVELOPE', 'exception.message': '[Redacted]' }],
    ]);
    expect(JSON.stringify(span.events)).not.toMatch(/jane|550|at /);
  });
});

describe('withholdErrorDetails', () => {
  it('makes an instrumentation’s span record failures without their messages or stacks', () => {
    const span = exported((s) => {
      withholdErrorDetails(s);
      // As the HTTP, Fastify and pg instrumentations record a failure.
      s.setStatus({ code: SpanStatusCode.ERROR, message: 'invalid input syntax for type uuid: "jane"' });
      s.recordException(
        Object.assign(new Error('invalid input syntax for type uuid: "jane"'), { code: '22P02' }),
      );
      s.recordException('PostgreSQL error quoting "jane"');
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: '[Redacted]' });
    expect(span.events.map((e) => e.attributes)).toEqual([
      { 'exception.type': '22P02', 'exception.message': '[Redacted]' },
      { 'exception.type': 'Error', 'exception.message': '[Redacted]' },
    ]);
    expect(JSON.stringify([span.status, span.events])).not.toContain('jane');
  });

  it('leaves a status without a message as it is', () => {
    const span = exported((s) => {
      withholdErrorDetails(s);
      s.setStatus({ code: SpanStatusCode.ERROR });
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
  });
});
