import { type Attributes, type HrTime, ROOT_CONTEXT, type Span, SpanKind, trace } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/**
 * Test helper: records spans with the real OpenTelemetry SDK and serialises them with the serializers the
 * OTLP/HTTP exporters use, so decoder tests see exactly the bytes a client sends.
 */
export interface SpanSpec {
  name: string;
  kind?: SpanKind;
  attributes?: Attributes;
  events?: Array<{ name: string; attributes?: Attributes }>;
  start?: HrTime;
  end?: HrTime;
  /** Index of an earlier spec in the same list to use as parent. */
  parent?: number;
}

export function recordSpans(specs: SpanSpec[], serviceName = 'support-bot'): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('gen-ai-test', '1.0.0');
  const started: Span[] = [];
  for (const spec of specs) {
    const ctx = spec.parent === undefined ? ROOT_CONTEXT : trace.setSpan(ROOT_CONTEXT, started[spec.parent]);
    const span = tracer.startSpan(
      spec.name,
      { kind: spec.kind ?? SpanKind.CLIENT, attributes: spec.attributes, startTime: spec.start },
      ctx,
    );
    for (const event of spec.events ?? []) span.addEvent(event.name, event.attributes);
    started.push(span);
  }
  // End children before parents, as instrumented code does.
  for (let i = specs.length - 1; i >= 0; i--) started[i].end(specs[i].end);
  return exporter.getFinishedSpans();
}

function bytes(serialized: Uint8Array | undefined): Buffer {
  if (!serialized) throw new Error('serializer returned no bytes');
  return Buffer.from(serialized);
}

export const toOtlpJson = (spans: ReadableSpan[]): Buffer =>
  bytes(JsonTraceSerializer.serializeRequest(spans));

export const toOtlpProtobuf = (spans: ReadableSpan[]): Buffer =>
  bytes(ProtobufTraceSerializer.serializeRequest(spans));
