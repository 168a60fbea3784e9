/**
 * Plain, encoding-independent form of an OTLP ExportTraceServiceRequest. OTLP/JSON and OTLP/protobuf
 * decode to exactly this shape: ids are lowercase hex, timestamps are decimal strings of Unix nanoseconds
 * (they exceed Number.MAX_SAFE_INTEGER), attributes are a flat record with AnyValue unwrapped.
 */
export interface OtlpTraceRequest {
  resourceSpans: OtlpResourceSpans[];
}

export interface OtlpResourceSpans {
  resource: { attributes: OtlpAttributes };
  scopeSpans: OtlpScopeSpans[];
}

export interface OtlpScopeSpans {
  scope?: { name: string; version?: string };
  spans: OtlpSpan[];
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttributes;
  events: OtlpSpanEvent[];
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
}

export interface OtlpSpanEvent {
  name: string;
  timeUnixNano: string;
  attributes: OtlpAttributes;
}

/**
 * Unwrapped AnyValue: string | boolean | number | null | OtlpAttributeValue[] | Record<string, ...>.
 * int64 values become numbers when they are safe integers and decimal strings otherwise (no silent precision
 * loss, and still JSON-serialisable for trace metadata); bytes become base64 strings.
 */
export type OtlpAttributes = Record<string, unknown>;

/** Trace ingest body (inputContext / outputDecision / metadata) built from one GenAI span. */
export interface TraceCandidate {
  inputContext: {
    prompt: string;
    systemPrompt?: string;
    context?: Record<string, unknown>;
    conversationId?: string;
  };
  outputDecision: {
    action: 'llm_response' | 'tool_call';
    text: string;
    toolCalls?: ToolCall[];
  };
  metadata: Record<string, unknown>;
  confidence?: number;
  /** `governance.subject.ref` of the span (or of the ancestor span its prompt came from). */
  subjectRef?: string;
}

export interface ToolCall {
  name: string;
  /** Parsed JSON when the instrumentation sent a JSON string, else the value as sent. */
  arguments: unknown;
}

export interface RejectedSpan {
  spanId: string;
  reason: string;
}

export interface GenAiExtraction {
  traces: TraceCandidate[];
  rejected: RejectedSpan[];
  droppedNonGenAi: number;
}
