import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { OTLPTraceExporter as OTLPHttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];
type ExporterConfig = NonNullable<ConstructorParameters<typeof OTLPHttpJsonExporter>[0]>;
/** SUCCESS of @opentelemetry/core (not a direct dependency). */
const SUCCESS = 0;
/** GZIP of @opentelemetry/otlp-exporter-base (not a direct dependency). */
const GZIP = 'gzip' as ExporterConfig['compression'];
import { eq } from 'drizzle-orm';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeExportTraceResponse } from '../libs/governance/src/otel/otlp-response.js';
import {
  recordSpans,
  type SpanSpec,
  toOtlpJson,
  toOtlpProtobuf,
} from '../libs/governance/src/otel/otlp-payloads.fixture.js';
import { traces } from '../libs/governance/src/traces/trace.schema.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { type TestAgent } from './support/builders.js';

const OTLP = '/api/v1/otel/v1/traces';

const StatusType = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'));

function chatSpan(prompt: string, answer: string, name = 'chat gpt-4o'): SpanSpec {
  return {
    name,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: answer }] },
      ]),
    },
  };
}

const httpSpan: SpanSpec = {
  name: 'GET /orders',
  attributes: { 'http.request.method': 'GET', 'url.path': '/orders' },
};

function exportWith(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

describe('OTLP trace ingestion', () => {
  let ctx: TestContext;
  let owner: Registered;
  let agent: TestAgent;
  let baseUrl: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'OTLP Org' });
    agent = await ctx.newAgent(owner.organization.id, 'Instrumented bot');
    await ctx.newPolicy(owner.organization.id, {
      name: 'No secrets',
      outcome: 'block',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'root password' }],
    });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const address = ctx.app.getHttpServer().address() as AddressInfo;
    baseUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => ctx?.close());

  async function tracesByPrompt(prompt: string) {
    const res = await ctx.get('/api/v1/traces', { token: owner.token, query: { limit: '100' } });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { inputContext: { prompt: string } }[]).filter(
      (t) => t.inputContext.prompt === prompt,
    );
  }

  it('ingests GenAI spans exported with the OTLP/HTTP JSON exporter and drops the others', async () => {
    const exporter = new OTLPHttpJsonExporter({ url: baseUrl + OTLP, headers: { 'X-API-Key': agent.key } });
    const spans = recordSpans([chatSpan('What is the refund window (json)?', 'Thirty days.'), httpSpan]);
    const result = await exportWith(exporter, spans);
    await exporter.shutdown();
    expect(result.code, String(result.error)).toBe(SUCCESS);

    const found = await tracesByPrompt('What is the refund window (json)?');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      agentId: agent.id,
      status: 'approved',
      schemaVersion: '2026-04-11',
      outputDecision: { action: 'llm_response', text: 'Thirty days.' },
      metadata: { source: 'otlp', operation: 'chat', provider: 'openai', spanName: 'chat gpt-4o' },
    });
    const all = await ctx.db.db.select().from(traces).where(eq(traces.organizationId, owner.organization.id));
    expect(all.some((t) => (t.metadata as { spanName?: string }).spanName === 'GET /orders')).toBe(false);
  });

  it('ingests spans exported with the protobuf exporter, gzip-compressed', async () => {
    const exporter = new OTLPProtoExporter({
      url: baseUrl + OTLP,
      headers: { 'X-API-Key': agent.key },
      compression: GZIP,
    });
    const spans = recordSpans([chatSpan('What is the refund window (protobuf)?', 'Thirty days.'), httpSpan]);
    const result = await exportWith(exporter, spans);
    await exporter.shutdown();
    expect(result.code, String(result.error)).toBe(SUCCESS);
    expect(await tracesByPrompt('What is the refund window (protobuf)?')).toHaveLength(1);
  });

  it('ingests gzip-compressed JSON from the JSON exporter', async () => {
    const exporter = new OTLPHttpJsonExporter({
      url: baseUrl + OTLP,
      headers: { 'X-API-Key': agent.key },
      compression: GZIP,
    });
    const result = await exportWith(exporter, recordSpans([chatSpan('Gzip JSON prompt', 'Yes.')]));
    await exporter.shutdown();
    expect(result.code, String(result.error)).toBe(SUCCESS);
    expect(await tracesByPrompt('Gzip JSON prompt')).toHaveLength(1);
  });

  it('answers {} when every span is accepted, blocked spans included (they are stored as blocked)', async () => {
    const spans = recordSpans([chatSpan('Tell me the root password', 'No.'), httpSpan]);
    const res = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: toOtlpJson(spans),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({});
    const [blocked] = await tracesByPrompt('Tell me the root password');
    expect(blocked).toMatchObject({ status: 'blocked' });
  });

  it('counts rejected spans (mapping and pipeline validation) in partialSuccess, in the request encoding', async () => {
    const noPrompt: SpanSpec = { name: 'chat', attributes: { 'gen_ai.operation.name': 'chat' } };
    const badTool: SpanSpec = {
      name: 'chat tools',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'Run it' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'c1', name: 't'.repeat(300), arguments: {} }],
          },
        ]),
      },
    };
    const spans = recordSpans([chatSpan('Accepted among rejects', 'Fine.'), noPrompt, badTool, httpSpan]);

    const json = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: toOtlpJson(spans),
      headers: { 'content-type': 'application/json' },
    });
    expect(json.statusCode, json.body).toBe(200);
    const body = json.json();
    expect(body.partialSuccess.rejectedSpans).toBe(2);
    expect(body.partialSuccess.errorMessage).toMatch(/no prompt text/);
    expect(body.partialSuccess.errorMessage).toMatch(/toolCalls\.0\.name/);

    const proto = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: gzipSync(toOtlpProtobuf(spans)),
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
    });
    expect(proto.statusCode).toBe(200);
    expect(proto.headers['content-type']).toMatch(/^application\/x-protobuf/);
    const decoded = decodeExportTraceResponse(proto.rawPayload);
    expect(decoded.partialSuccess?.rejectedSpans).toBe(2);
    expect(await tracesByPrompt('Accepted among rejects')).toHaveLength(2);
  });

  it('rejects a span with text PostgreSQL cannot store and keeps the others of the export', async () => {
    const spans = recordSpans([
      chatSpan('Storable before', 'Fine.'),
      chatSpan('Unpaired \ud800 surrogate', 'Fine.'),
      chatSpan('Storable after', 'Fine.'),
    ]);
    const res = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: toOtlpJson(spans),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().partialSuccess.rejectedSpans).toBe(1);
    expect(res.json().partialSuccess.errorMessage).toMatch(/unpaired surrogates/);
    expect(await tracesByPrompt('Storable before')).toHaveLength(1);
    expect(await tracesByPrompt('Storable after')).toHaveLength(1);
  });

  it('answers 400 with a google.rpc.Status for a malformed body, as JSON or protobuf', async () => {
    const json = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: '{"resourceSpans": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(json.statusCode).toBe(400);
    expect(json.json()).toEqual({ code: 3, message: expect.any(String) });

    const proto = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]),
      headers: { 'content-type': 'application/x-protobuf' },
    });
    expect(proto.statusCode).toBe(400);
    expect(proto.headers['content-type']).toMatch(/^application\/x-protobuf/);
    const status = StatusType.toObject(StatusType.decode(proto.rawPayload)) as {
      code: number;
      message: string;
    };
    expect(status.code).toBe(3);
    expect(status.message.length).toBeGreaterThan(0);

    const badGzip = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: Buffer.from('not gzip'),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(badGzip.statusCode).toBe(400);

    const unsupported = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(unsupported.statusCode).toBe(415);
  });

  it('accepts bodies over the 1 MiB JSON limit up to 4 MiB, and answers 413 beyond', async () => {
    const bulky: SpanSpec = { name: 'bulk', attributes: { 'payload.blob': 'b'.repeat(1_500_000) } };
    const big = toOtlpJson(recordSpans([chatSpan('Big batch prompt', 'Ok.'), bulky]));
    expect(big.length).toBeGreaterThan(1024 * 1024);
    const res = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: big,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(await tracesByPrompt('Big batch prompt')).toHaveLength(1);
    const tooBig = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: Buffer.alloc(4 * 1024 * 1024 + 1, 0x20),
      headers: { 'content-type': 'application/json' },
    });
    expect(tooBig.statusCode).toBe(413);
  });

  it('answers 413 to a gzip bomb past BODY_MAX_INFLATE_RATIO, under the 8 MiB cap, and stores none of its spans', async () => {
    const spans = recordSpans([chatSpan('Gzip bomb prompt', 'Boom.')]);
    // Valid exports followed by 7 MiB that gzip squeezes about a thousandfold: JSON whitespace, and an unknown
    // protobuf field (which decoders skip). Both would decode to an accepted export within the size cap.
    const padding = 7 * 1024 * 1024;
    const jsonBomb = gzipSync(Buffer.concat([toOtlpJson(spans), Buffer.alloc(padding, 0x20)]));
    const unknownField = Buffer.from([(15 << 3) | 2, 0x80, 0x80, 0xc0, 0x03]); // field 15, length 7 MiB
    const protoBomb = gzipSync(Buffer.concat([toOtlpProtobuf(spans), unknownField, Buffer.alloc(padding)]));
    expect(jsonBomb.length).toBeLessThan(64 * 1024);
    expect(protoBomb.length).toBeLessThan(64 * 1024);

    const json = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: jsonBomb,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(json.statusCode, json.body).toBe(413);
    expect(json.json()).toEqual({
      code: 8,
      message: expect.stringMatching(/more than 100 times its encoded size/),
    });
    const proto = await ctx.post(OTLP, {
      apiKey: agent.key,
      payload: protoBomb,
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
    });
    expect(proto.statusCode).toBe(413);
    expect(proto.headers['content-type']).toMatch(/^application\/x-protobuf/);
    expect(StatusType.toObject(StatusType.decode(proto.rawPayload))).toMatchObject({ code: 8 });
    expect(await tracesByPrompt('Gzip bomb prompt')).toHaveLength(0);

    // A real export of ordinary text, gzip-compressed by the SDK, inflates past the ratio's 64 KiB floor: accepted.
    const exporter = new OTLPProtoExporter({
      url: baseUrl + OTLP,
      headers: { 'X-API-Key': agent.key },
      compression: GZIP,
    });
    const context: SpanSpec = {
      name: 'load',
      attributes: { 'app.context': randomBytes(96 * 1024).toString('hex') },
    };
    const result = await exportWith(exporter, recordSpans([chatSpan('Large gzip export', 'Fine.'), context]));
    await exporter.shutdown();
    expect(result.code, String(result.error)).toBe(SUCCESS);
    expect(await tracesByPrompt('Large gzip export')).toHaveLength(1);
  });

  it('accepts agent keys only', async () => {
    const spans = toOtlpJson(recordSpans([chatSpan('Not by JWT', 'No.')]));
    const headers = { 'content-type': 'application/json' };
    expectErrorEnvelope(
      await ctx.post(OTLP, { token: owner.token, payload: spans, headers }),
      403,
      'FORBIDDEN',
    );
    expectErrorEnvelope(await ctx.post(OTLP, { payload: spans, headers }), 401, 'UNAUTHORIZED');
    expect(await tracesByPrompt('Not by JWT')).toHaveLength(0);
  });

  it('leaves other routes JSON-only: protobuf bodies there still get 415', async () => {
    const res = await ctx.post('/api/v1/traces', {
      apiKey: agent.key,
      payload: toOtlpProtobuf(recordSpans([chatSpan('x', 'y')])),
      headers: { 'content-type': 'application/x-protobuf' },
    });
    expectErrorEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const raw = await ctx.post('/api/v1/traces', {
      apiKey: agent.key,
      payload: 'x',
      headers: { 'content-type': 'application/x-svc-otlp-raw' },
    });
    expectErrorEnvelope(raw, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});
