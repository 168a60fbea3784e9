// An agent instrumented with the OpenTelemetry SDK, following the GenAI semantic conventions (`gen_ai.*`), that
// exports its spans to the governance service's OTLP endpoint; then it reads back the governance traces its spans
// became, with the typed client.
//
//   GOVERNANCE_AGENT_KEY=svc_agent_… GOVERNANCE_API_KEY=svc_live_… node examples/otel-agent.ts
//
// GOVERNANCE_AGENT_KEY sends the spans (they become traces of that agent); GOVERNANCE_API_KEY, a workspace key
// (read-only is enough), reads them back: an agent key may write traces but not read them.
//
// OTLP ingestion is observation after the fact: the service applies its policies to every GenAI span and records
// the verdict, but the agent has already acted. To ask before acting, send the decision with `client.sendTrace`
// (examples/agent-decisions.ts). Any OpenTelemetry instrumentation that writes these attributes (OpenLLMetry,
// OpenInference, the vendors' own) works the same way: point its exporter at the endpoint with the agent key.
import {
  diag,
  DiagConsoleLogger,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createGovernanceClient } from '@governance/client';

const baseUrl = process.env.GOVERNANCE_URL ?? 'http://localhost:3000';
const agentKey = required('GOVERNANCE_AGENT_KEY');
const apiKey = required('GOVERNANCE_API_KEY');

// The SDK reports export failures (a wrong key, an unreachable service, rejected spans) through its diagnostic
// logger, which is silent unless one is set.
diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);

// The standard OTLP/HTTP exporter (protobuf here; the JSON one works too), with the agent key as a header. The
// service name becomes each trace's `metadata.serviceName`.
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'order-assistant' }),
  spanProcessors: [
    new BatchSpanProcessor(
      new OTLPTraceExporter({ url: `${baseUrl}/api/v1/otel/v1/traces`, headers: { 'X-API-Key': agentKey } }),
    ),
  ],
});
const tracer = provider.getTracer('order-assistant', '1.0.0');

/** A child of `parent`. (With @opentelemetry/sdk-node, startActiveSpan would find the parent by itself.) */
const childOf = (parent: Span, name: string, kind: SpanKind, attributes: Record<string, string | number>) =>
  tracer.startSpan(name, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, parent));

// Message contents are JSON strings: span attributes cannot hold objects. The shapes are those of the GenAI
// conventions: messages of parts, a part being text or a tool call.
const json = (value: unknown) => JSON.stringify(value);
const question = 'Where is my order A-1042? It was due on Monday.';
const order = { orderId: 'A-1042', status: 'in_transit', carrier: 'DHL', expectedDelivery: 'Thursday' };
const answer = 'Your order A-1042 is on its way with DHL and should arrive on Thursday.';
const instructions = 'You are the order assistant of an online shop. Answer from the order system only.';

// --- one turn of the agent, as its instrumentation would record it -------------------------------------------
// invoke_agent: the whole turn, with the user's question and the agent's final answer. The service reads the
// prompt from gen_ai.input.messages, the output from gen_ai.output.messages, the system prompt from
// gen_ai.system_instructions, and keeps the provider, models, token counts and conversation id as metadata.
const turn = tracer.startSpan('invoke_agent order-assistant', {
  kind: SpanKind.INTERNAL,
  attributes: {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'openai',
    'gen_ai.agent.name': 'order-assistant',
    'gen_ai.conversation.id': `conversation-${Date.now()}`,
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.system_instructions': json([{ type: 'text', content: instructions }]),
    'gen_ai.input.messages': json([{ role: 'user', parts: [{ type: 'text', content: question }] }]),
  },
});

// chat: the model call that decides to look the order up. Its tool call becomes the trace's toolCalls, which
// policies can match (`toolCalls.name`).
const chat = childOf(turn, 'chat gpt-4o', SpanKind.CLIENT, {
  'gen_ai.operation.name': 'chat',
  'gen_ai.provider.name': 'openai',
  'gen_ai.request.model': 'gpt-4o',
  'gen_ai.response.model': 'gpt-4o-2024-08-06',
  'gen_ai.usage.input_tokens': 112,
  'gen_ai.usage.output_tokens': 18,
  'gen_ai.input.messages': json([{ role: 'user', parts: [{ type: 'text', content: question }] }]),
  'gen_ai.output.messages': json([
    {
      role: 'assistant',
      finish_reason: 'tool_call',
      parts: [
        { type: 'text', content: 'Let me look that order up.' },
        { type: 'tool_call', id: 'call_1', name: 'lookup_order', arguments: { orderId: 'A-1042' } },
      ],
    },
  ]),
});
chat.end();

// execute_tool: the tool run. It records no prompt of its own: the service takes the one of its nearest GenAI
// ancestor in the same export (the invoke_agent span) and stores a `tool_call` trace.
const tool = childOf(turn, 'execute_tool lookup_order', SpanKind.INTERNAL, {
  'gen_ai.operation.name': 'execute_tool',
  'gen_ai.tool.name': 'lookup_order',
  'gen_ai.tool.call.id': 'call_1',
  'gen_ai.tool.call.arguments': json({ orderId: 'A-1042' }),
  'gen_ai.tool.call.result': json(order),
});
// A span without gen_ai.* attributes (the order system's HTTP call) goes to the same endpoint and is dropped:
// one exporter can carry the whole application's traces.
const http = childOf(tool, 'GET /orders/{id}', SpanKind.CLIENT, {
  'http.request.method': 'GET',
  'url.full': 'https://orders.internal/orders/A-1042',
  'http.response.status_code': 200,
});
http.end();
tool.setStatus({ code: SpanStatusCode.OK });
tool.end();

turn.setAttribute(
  'gen_ai.output.messages',
  json([{ role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: answer }] }]),
);
turn.end();

// --- export -----------------------------------------------------------------------------------------------------
// forceFlush sends what is buffered now and rejects if the export failed. The service answers once the traces
// have committed, so they can be read right after.
const otelTraceId = turn.spanContext().traceId;
const readFrom = new Date(Date.now() - 60_000); // a margin for a service whose clock differs from ours
await provider.forceFlush();
await provider.shutdown();
console.log(`exported 4 spans of OpenTelemetry trace ${otelTraceId} (3 GenAI spans, 1 HTTP span)`);

// --- read back --------------------------------------------------------------------------------------------------
// Each kept span became a governance trace; its OpenTelemetry ids are in `metadata.otelTraceId` / `otelSpanId`.
const client = createGovernanceClient({ baseUrl, credentials: { apiKey } });
const recent = client.paginate('/api/v1/traces', { params: { query: { from: readFrom.toISOString() } } });
const found = [];
// A trace whose subject's content was erased reads its content as null (`erasedAt` set).
for await (const t of recent) if (t.metadata?.otelTraceId === otelTraceId) found.push(t);
for (const t of found.reverse()) {
  // Reversed, the newest-first list is in the order the spans ended. Each trace shows the policies' verdict and
  // what the service read from its span: the action and the tool calls.
  const calls = (t.outputDecision?.toolCalls as { name: string }[] | undefined)?.map((c) => c.name);
  const what = [t.outputDecision?.action, ...(calls ?? [])].join(', ');
  console.log(`  ${String(t.metadata?.spanName).padEnd(30)} → ${t.status} (${what}), trace ${t.id}`);
}
if (found.length !== 3) {
  console.error(`expected 3 governance traces for OpenTelemetry trace ${otelTraceId}, found ${found.length}`);
  process.exit(1);
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set (see examples/README.md)`);
    process.exit(2);
  }
  return value;
}
