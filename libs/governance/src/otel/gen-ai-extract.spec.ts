import { gzipSync } from 'node:zlib';

import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';

import { extractGenAiTraces, TRACE_LIMITS_2026_04_11 } from './gen-ai-extract.js';
import { decodeOtlpTraces } from './otlp-decode.js';
import { recordSpans, type SpanSpec, toOtlpJson, toOtlpProtobuf } from './otlp-payloads.fixture.js';

const encodings = [
  { name: 'OTLP/JSON', send: (s: ReadableSpan[]) => decodeOtlpTraces(toOtlpJson(s), 'application/json') },
  {
    name: 'OTLP/protobuf+gzip',
    send: (s: ReadableSpan[]) =>
      decodeOtlpTraces(gzipSync(toOtlpProtobuf(s)), 'application/x-protobuf', 'gzip'),
  },
];

const chatSpan: SpanSpec = {
  name: 'chat gpt-4o',
  attributes: {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'gpt-4o',
    'gen_ai.response.model': 'gpt-4o-2024-08-06',
    'gen_ai.usage.input_tokens': 97,
    'gen_ai.usage.output_tokens': 52,
    'gen_ai.conversation.id': 'conv-17',
    'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'You are a refund assistant.' }]),
    'gen_ai.input.messages': JSON.stringify([
      { role: 'user', parts: [{ type: 'text', content: 'Refund order 42?' }] },
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'c1', name: 'lookup_order', arguments: { id: 42 } }],
      },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'paid' }] },
      { role: 'user', parts: [{ type: 'text', content: 'Please hurry.' }] },
    ]),
    'gen_ai.output.messages': JSON.stringify([
      {
        role: 'assistant',
        finish_reason: 'tool_call',
        parts: [
          { type: 'text', content: 'Issuing the refund now.' },
          { type: 'tool_call', id: 'c2', name: 'issue_refund', arguments: { orderId: 42, amount: 19.5 } },
        ],
      },
    ]),
  },
  start: [1_750_000_000, 0],
  end: [1_750_000_001, 250_500_000],
};

describe.each(encodings)('extractGenAiTraces over $name', ({ send }) => {
  it('maps a chat span with gen_ai.input/output.messages JSON strings to a trace body', async () => {
    const spans = recordSpans([chatSpan]);
    const { traces, rejected, droppedNonGenAi } = extractGenAiTraces(await send(spans));
    expect(rejected).toEqual([]);
    expect(droppedNonGenAi).toBe(0);
    expect(traces).toHaveLength(1);
    const [trace] = traces;
    expect(trace.inputContext).toEqual({
      prompt: 'Refund order 42?\n\nPlease hurry.',
      systemPrompt: 'You are a refund assistant.',
      conversationId: 'conv-17',
      context: {
        messages: [
          { role: 'assistant', text: '', toolCalls: [{ name: 'lookup_order', arguments: { id: 42 } }] },
          { role: 'tool', text: '' },
        ],
      },
    });
    expect(trace.outputDecision).toEqual({
      action: 'llm_response',
      text: 'Issuing the refund now.',
      toolCalls: [{ name: 'issue_refund', arguments: { orderId: 42, amount: 19.5 } }],
    });
    expect(trace.metadata).toEqual({
      source: 'otlp',
      otelTraceId: spans[0].spanContext().traceId,
      otelSpanId: spans[0].spanContext().spanId,
      spanName: 'chat gpt-4o',
      serviceName: 'support-bot',
      instrumentationScope: 'gen-ai-test',
      provider: 'openai',
      operation: 'chat',
      requestModel: 'gpt-4o',
      responseModel: 'gpt-4o-2024-08-06',
      inputTokens: 97,
      outputTokens: 52,
      durationMs: 1250.5,
    });
    expect(trace.confidence).toBeUndefined();
  });

  it('reads the deprecated gen_ai.system, gen_ai.prompt and gen_ai.completion attributes', async () => {
    const { traces } = extractGenAiTraces(
      await send(
        recordSpans([
          {
            name: 'completion',
            attributes: {
              'gen_ai.system': 'anthropic',
              'gen_ai.prompt': 'Summarise the claim.',
              'gen_ai.completion': 'The claim is valid.',
            },
          },
        ]),
      ),
    );
    expect(traces[0].inputContext).toEqual({ prompt: 'Summarise the claim.' });
    expect(traces[0].outputDecision).toEqual({ action: 'llm_response', text: 'The claim is valid.' });
    expect(traces[0].metadata.provider).toBe('anthropic');
  });

  it('reads per-message span events, with gen_ai.choice as the output', async () => {
    const { traces } = extractGenAiTraces(
      await send(
        recordSpans([
          {
            name: 'chat',
            attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'openai' },
            events: [
              { name: 'gen_ai.system.message', attributes: { content: 'Be terse.' } },
              { name: 'gen_ai.user.message', attributes: { content: 'Weather in Paris?' } },
              { name: 'gen_ai.assistant.message', attributes: { content: 'Sunny.' } },
              { name: 'gen_ai.user.message', attributes: { content: 'And tomorrow?' } },
              {
                name: 'gen_ai.choice',
                attributes: {
                  index: 0,
                  finish_reason: 'stop',
                  message: JSON.stringify({ role: 'assistant', content: 'Rain.' }),
                },
              },
            ],
          },
        ]),
      ),
    );
    expect(traces[0].inputContext).toEqual({
      prompt: 'Weather in Paris?\n\nAnd tomorrow?',
      systemPrompt: 'Be terse.',
      context: { messages: [{ role: 'assistant', text: 'Sunny.' }] },
    });
    expect(traces[0].outputDecision).toEqual({ action: 'llm_response', text: 'Rain.' });
  });

  it('takes an assistant message event after the last user message as the reply when there is no choice', async () => {
    const { traces } = extractGenAiTraces(
      await send(
        recordSpans([
          {
            name: 'chat',
            attributes: { 'gen_ai.operation.name': 'chat' },
            events: [
              { name: 'gen_ai.user.message', attributes: { content: 'Hello' } },
              { name: 'gen_ai.assistant.message', attributes: { content: 'Hi there' } },
            ],
          },
        ]),
      ),
    );
    expect(traces[0].inputContext).toEqual({ prompt: 'Hello' });
    expect(traces[0].outputDecision.text).toBe('Hi there');
  });

  it('maps an execute_tool span to a tool_call with parsed arguments and the agent prompt', async () => {
    const spans = recordSpans([
      {
        name: 'invoke_agent refunds',
        kind: SpanKind.INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'refunds',
          'gen_ai.input.messages': JSON.stringify([
            { role: 'user', parts: [{ type: 'text', content: 'Refund 42' }] },
          ]),
        },
      },
      { name: 'http lookup', parent: 0, attributes: { 'http.request.method': 'GET' } },
      {
        name: 'execute_tool issue_refund',
        parent: 1,
        kind: SpanKind.INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'issue_refund',
          'gen_ai.tool.call.id': 'call_9',
          'gen_ai.tool.call.arguments': '{"orderId":42,"amount":19.5}',
          'gen_ai.tool.call.result': '{"ok":true}',
        },
      },
    ]);
    const { traces, rejected, droppedNonGenAi } = extractGenAiTraces(await send(spans));
    expect(rejected).toEqual([]);
    expect(droppedNonGenAi).toBe(1);
    const tool = traces.find((t) => t.metadata.operation === 'execute_tool')!;
    expect(tool.outputDecision).toEqual({
      action: 'tool_call',
      text: '{"ok":true}',
      toolCalls: [{ name: 'issue_refund', arguments: { orderId: 42, amount: 19.5 } }],
    });
    expect(tool.inputContext.prompt).toBe('Refund 42');
    expect(tool.metadata.toolCallId).toBe('call_9');
    expect(tool.metadata.promptFromSpanId).toBe(
      spans.find((s) => s.name.startsWith('invoke_agent'))!.spanContext().spanId,
    );
  });

  it('drops non-GenAI spans silently and rejects a GenAI span without any prompt', async () => {
    const spans = recordSpans([
      { name: 'GET /health', kind: SpanKind.SERVER, attributes: { 'http.request.method': 'GET' } },
      {
        name: 'embeddings',
        attributes: { 'gen_ai.operation.name': 'embeddings', 'gen_ai.provider.name': 'openai' },
      },
      {
        name: 'execute_tool orphan',
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'x' },
      },
    ]);
    const { traces, rejected, droppedNonGenAi } = extractGenAiTraces(await send(spans));
    expect(traces).toEqual([]);
    expect(droppedNonGenAi).toBe(1);
    const idOf = (name: string) => spans.find((s) => s.name === name)!.spanContext().spanId;
    expect(rejected).toHaveLength(2);
    expect(rejected).toContainEqual({
      spanId: idOf('embeddings'),
      reason: expect.stringMatching(/no prompt text/),
    });
    // A tool span with no ancestor GenAI span in the batch has nothing to inherit a prompt from.
    expect(rejected).toContainEqual({
      spanId: idOf('execute_tool orphan'),
      reason: expect.stringMatching(/no prompt text/),
    });
  });

  it('rejects a span whose prompt exceeds the schema limit', async () => {
    const long = 'x'.repeat(TRACE_LIMITS_2026_04_11.maxPromptLength + 1);
    const { traces, rejected } = extractGenAiTraces(
      await send(
        recordSpans([{ name: 'chat', attributes: { 'gen_ai.system': 'openai', 'gen_ai.prompt': long } }]),
      ),
    );
    expect(traces).toEqual([]);
    expect(rejected[0].reason).toBe('prompt exceeds 50000 characters');
  });
});

describe('extractGenAiTraces across encodings', () => {
  it('gives identical results for the JSON and the protobuf encoding of the same spans', async () => {
    const spans = recordSpans([
      chatSpan,
      { name: 'GET /', kind: SpanKind.SERVER, attributes: { 'http.route': '/' } },
      { name: 'embeddings', attributes: { 'gen_ai.operation.name': 'embeddings' } },
    ]);
    const [fromJson, fromProto] = await Promise.all(
      encodings.map(async ({ send }) => extractGenAiTraces(await send(spans))),
    );
    expect(fromJson).toEqual(fromProto);
    expect(fromJson.traces).toHaveLength(1);
    expect(fromJson.rejected).toHaveLength(1);
  });
});
