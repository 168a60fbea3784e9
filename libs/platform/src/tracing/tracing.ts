import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  type Span,
  type SpanKind,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { recordSpanError } from './span-errors.js';

export { recordSpanError };

/** The instrumentation scope of the service's own spans. */
export const TRACER_NAME = 'governance-service';

let enabled: boolean | undefined;
let tracer: Tracer | undefined;

/**
 * Whether this process traces: an OpenTelemetry SDK registered a tracer provider before the application was loaded
 * (the process's entry starts one when the OTEL_* variables ask, docs/operators.md, "Tracing the service"). Decided
 * on first use and kept, so that everything below costs one boolean read when tracing is off.
 */
export function tracingEnabled(): boolean {
  // The API hands out a proxy provider, which has a delegate only once an SDK registered one.
  const provider = trace.getTracerProvider() as { getDelegateTracer?: (name: string) => Tracer | undefined };
  return (enabled ??= provider.getDelegateTracer?.(TRACER_NAME) !== undefined);
}

export interface SpanSettings {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent, when it is not the active context (work queued by one request and done for several). */
  parent?: Context;
  links?: Link[];
}

/**
 * Runs `fn` in a span when tracing is on: the span is active inside `fn` (the spans of its queries and of nested
 * `withSpan` calls are its children), records a throw as its error (its class, never its message: span-errors.ts),
 * and ends when `fn` settles. `settings` may be a function, called only when tracing is on. Tracing off, `fn` runs as
 * it is, with no span.
 */
export function withSpan<T>(
  name: string,
  fn: (span: Span | undefined) => Promise<T>,
  settings?: SpanSettings | (() => SpanSettings),
): Promise<T> {
  if (!tracingEnabled()) return fn(undefined);
  const { parent, ...options } = (typeof settings === 'function' ? settings() : settings) ?? {};
  tracer ??= trace.getTracer(TRACER_NAME);
  return tracer.startActiveSpan(name, options, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      recordSpanError(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The active context when tracing is on, to parent or link work done later for it (undefined when off). */
export function tracedContext(): Context | undefined {
  return tracingEnabled() ? context.active() : undefined;
}

/** `fn`, bound to the active context when tracing is on: work it starts later is traced under the current span. */
export function bindTraced<F extends (...args: never[]) => unknown>(fn: F): F {
  return tracingEnabled() ? context.bind(context.active(), fn) : fn;
}

/** Marks the active span failed (a failure that is handled, not thrown); nothing when tracing is off. */
export function failActiveSpan(err: unknown): void {
  if (!tracingEnabled()) return;
  const span = trace.getActiveSpan();
  if (span) recordSpanError(span, err);
}

/** The span of a context, as a link (undefined without a valid span). */
export function linkTo(ctx: Context | undefined): Link | undefined {
  const spanContext = ctx && trace.getSpanContext(ctx);
  return spanContext && isSpanContextValid(spanContext) ? { context: spanContext } : undefined;
}

/** The ids a log line carries within a span: the names of OpenTelemetry's log data model (`trace_id`, `span_id`). */
export interface LogTraceFields {
  trace_id: string;
  span_id: string;
  trace_flags: string;
}

/** The active span's ids, for a log line; undefined outside a span. Call only when tracing is on. */
export function activeLogTraceFields(): LogTraceFields | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return undefined;
  return {
    trace_id: spanContext.traceId,
    span_id: spanContext.spanId,
    trace_flags: spanContext.traceFlags.toString(16).padStart(2, '0'),
  };
}

/** Exports the spans still buffered (the application is closing); nothing when tracing is off. */
export async function flushTracing(): Promise<void> {
  if (!tracingEnabled()) return;
  const provider = trace.getTracerProvider() as { getDelegate?: () => { forceFlush?: () => Promise<void> } };
  await provider.getDelegate?.().forceFlush?.();
}
