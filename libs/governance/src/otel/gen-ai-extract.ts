import { SCHEMA_VERSIONS, type SchemaLimits } from '#platform';
import { type ChatMessage, readConversation, parseJsonish } from './gen-ai-messages.js';
import type {
  GenAiExtraction,
  OtlpAttributes,
  OtlpSpan,
  OtlpTraceRequest,
  RejectedSpan,
  TraceCandidate,
} from './otlp-trace.types.js';

/** Trace validation limits; the defaults are those of schema version 2026-04-11. */
export interface GenAiTraceLimits {
  maxPromptLength: number;
  maxSystemPromptLength: number;
  maxContextBytes: number;
  maxConversationIdLength: number;
  maxToolCalls: number;
}

/** The limits a span must meet, from a schema version's limits in the version registry. */
export function genAiLimitsOf(limits: SchemaLimits): GenAiTraceLimits {
  return { ...limits.inputContext, maxToolCalls: limits.outputDecision.maxToolCalls };
}

export const TRACE_LIMITS_2026_04_11: GenAiTraceLimits = genAiLimitsOf(
  SCHEMA_VERSIONS.find((v) => v.version === '2026-04-11')!.limits,
);

export interface GenAiExtractOptions {
  /** Limits of the schema version the endpoint ingests under; spans that break them are rejected. */
  limits?: GenAiTraceLimits;
}

interface GenAiSpan {
  span: OtlpSpan;
  serviceName?: string;
  scopeName?: string;
  prompt: string;
  conversation: ReturnType<typeof readConversation>;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined;

/** A span is GenAI when it carries any of the attributes that identify a GenAI operation or provider. */
export function isGenAiSpan(attributes: OtlpAttributes): boolean {
  return (
    attributes['gen_ai.operation.name'] !== undefined ||
    attributes['gen_ai.provider.name'] !== undefined ||
    attributes['gen_ai.system'] !== undefined // deprecated predecessor of gen_ai.provider.name
  );
}

const textOf = (messages: ChatMessage[]): string =>
  messages
    .map((m) => m.text)
    .filter(Boolean)
    .join('\n\n');

function durationMs(span: OtlpSpan): number | undefined {
  const start = BigInt(span.startTimeUnixNano);
  const end = BigInt(span.endTimeUnixNano);
  if (start === 0n || end < start) return undefined;
  // Microsecond resolution is plenty for governance metadata and keeps the number short.
  return Number((end - start) / 1000n) / 1000;
}

function withoutUndefined(obj: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}

function metadataOf(g: GenAiSpan, promptFromSpanId: string | undefined): Record<string, unknown> {
  const a = g.span.attributes;
  const isError = g.span.status.code === 2;
  return withoutUndefined({
    source: 'otlp',
    // Prefixed: `traceId` would read as the governance trace's own id.
    otelTraceId: g.span.traceId,
    otelSpanId: g.span.spanId,
    otelParentSpanId: g.span.parentSpanId,
    spanName: g.span.name,
    serviceName: g.serviceName,
    instrumentationScope: g.scopeName,
    provider: str(a['gen_ai.provider.name']) ?? str(a['gen_ai.system']),
    operation: str(a['gen_ai.operation.name']),
    requestModel: str(a['gen_ai.request.model']),
    responseModel: str(a['gen_ai.response.model']),
    inputTokens: num(a['gen_ai.usage.input_tokens'] ?? a['gen_ai.usage.prompt_tokens']),
    outputTokens: num(a['gen_ai.usage.output_tokens'] ?? a['gen_ai.usage.completion_tokens']),
    agentName: str(a['gen_ai.agent.name']),
    toolCallId: str(a['gen_ai.tool.call.id']),
    durationMs: durationMs(g.span),
    spanStatus: isError ? 'error' : undefined,
    spanStatusMessage: isError ? g.span.status.message : undefined,
    promptFromSpanId,
  });
}

/**
 * Tool executions rarely record a prompt of their own; the prompt that led to the call is on an ancestor
 * GenAI span (invoke_agent, chat) of the same trace, if that span is in the same export batch.
 */
function ancestorWithPrompt(g: GenAiSpan, bySpan: Map<string, GenAiSpan>, parents: Map<string, string>) {
  const seen = new Set<string>();
  let parentId = g.span.parentSpanId;
  while (parentId && !seen.has(parentId)) {
    seen.add(parentId);
    const key = `${g.span.traceId}/${parentId}`;
    const candidate = bySpan.get(key);
    if (candidate?.prompt) return candidate;
    parentId = parents.get(key);
  }
  return undefined;
}

/**
 * The attribute that names the person a decision is about (docs/data-protection.md, "Subject references"): a
 * string, or an integer id written as one. Its length is checked with the rest of the trace.
 */
export const SUBJECT_REF_ATTRIBUTE = 'governance.subject.ref';

function subjectRefOf(attributes: GenAiSpan['span']['attributes']): string | undefined {
  const value = attributes[SUBJECT_REF_ATTRIBUTE];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return undefined;
}

function stringifyResult(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function toCandidate(
  g: GenAiSpan,
  inherited: GenAiSpan | undefined,
  limits: GenAiTraceLimits,
): TraceCandidate | string {
  const a = g.span.attributes;
  const { conversation } = g;
  const prompt = g.prompt || inherited?.prompt || '';
  if (!prompt) {
    return 'GenAI span has no prompt text (gen_ai.input.messages, gen_ai.prompt or gen_ai.user.message events); message content capture may be disabled in the instrumentation';
  }
  if (prompt.length > limits.maxPromptLength) return `prompt exceeds ${limits.maxPromptLength} characters`;
  const systemPrompt = conversation.systemPrompt || inherited?.conversation.systemPrompt || '';
  if (systemPrompt.length > limits.maxSystemPromptLength) {
    return `system prompt exceeds ${limits.maxSystemPromptLength} characters`;
  }
  const rawConversationId = a['gen_ai.conversation.id'];
  const conversationId = rawConversationId === undefined ? undefined : String(rawConversationId);
  if (conversationId && conversationId.length > limits.maxConversationIdLength) {
    return `gen_ai.conversation.id exceeds ${limits.maxConversationIdLength} characters`;
  }

  let outputDecision: TraceCandidate['outputDecision'];
  if (a['gen_ai.operation.name'] === 'execute_tool') {
    const name = str(a['gen_ai.tool.name']);
    if (!name) return 'execute_tool span has no gen_ai.tool.name';
    const args = parseJsonish(a['gen_ai.tool.call.arguments']) ?? {};
    outputDecision = {
      action: 'tool_call',
      text: stringifyResult(a['gen_ai.tool.call.result']),
      toolCalls: [{ name, arguments: args }],
    };
  } else {
    const toolCalls = conversation.output.flatMap((m) => m.toolCalls);
    outputDecision = {
      action: 'llm_response',
      text: textOf(conversation.output.filter((m) => m.role === 'assistant')),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    };
  }
  if ((outputDecision.toolCalls?.length ?? 0) > limits.maxToolCalls) {
    return `more than ${limits.maxToolCalls} tool calls`;
  }

  const metadata = metadataOf(g, inherited && !g.prompt ? inherited.span.spanId : undefined);
  // Turns other than the user's and the system's (assistant history, tool results) are the context the
  // model saw; they are optional, so an oversized history is dropped rather than the whole trace.
  const history = conversation.input.filter((m) => !['user', 'system', 'developer'].includes(m.role));
  let context: Record<string, unknown> | undefined;
  if (history.length > 0) {
    context = {
      messages: history.map((m) => ({
        role: m.role,
        text: m.text,
        ...(m.toolCalls.length ? { toolCalls: m.toolCalls } : {}),
      })),
    };
    if (Buffer.byteLength(JSON.stringify(context), 'utf8') > limits.maxContextBytes) {
      context = undefined;
      metadata.contextOmitted = true;
    }
  }

  const subjectRef = subjectRefOf(a) ?? (inherited ? subjectRefOf(inherited.span.attributes) : undefined);
  return {
    ...(subjectRef === undefined ? {} : { subjectRef }),
    inputContext: {
      prompt,
      ...(systemPrompt ? { systemPrompt } : {}),
      ...(context ? { context } : {}),
      ...(conversationId ? { conversationId } : {}),
    },
    outputDecision,
    metadata,
  };
}

/**
 * Keeps the generative-AI spans of a decoded OTLP request and maps each to a trace ingest body.
 * Non-GenAI spans are only counted; GenAI spans that cannot form a valid trace are listed with a reason
 * (the endpoint reports them as rejected spans in the OTLP partial-success response).
 */
export function extractGenAiTraces(
  request: OtlpTraceRequest,
  options: GenAiExtractOptions = {},
): GenAiExtraction {
  const limits = options.limits ?? TRACE_LIMITS_2026_04_11;
  const genAi: GenAiSpan[] = [];
  const parents = new Map<string, string>();
  let droppedNonGenAi = 0;

  for (const rs of request.resourceSpans) {
    const serviceName = str(rs.resource.attributes['service.name']);
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) {
        if (span.parentSpanId) parents.set(`${span.traceId}/${span.spanId}`, span.parentSpanId);
        if (!isGenAiSpan(span.attributes)) {
          droppedNonGenAi++;
          continue;
        }
        const conversation = readConversation(span.attributes, span.events);
        const prompt = textOf(conversation.input.filter((m) => m.role === 'user'));
        genAi.push({ span, serviceName, scopeName: ss.scope?.name, prompt, conversation });
      }
    }
  }

  const bySpan = new Map(genAi.map((g) => [`${g.span.traceId}/${g.span.spanId}`, g]));
  const traces: TraceCandidate[] = [];
  const rejected: RejectedSpan[] = [];
  for (const g of genAi) {
    const inherited =
      !g.prompt && g.span.attributes['gen_ai.operation.name'] === 'execute_tool'
        ? ancestorWithPrompt(g, bySpan, parents)
        : undefined;
    const result = toCandidate(g, inherited, limits);
    if (typeof result === 'string') rejected.push({ spanId: g.span.spanId, reason: result });
    else traces.push(result);
  }
  return { traces, rejected, droppedNonGenAi };
}
