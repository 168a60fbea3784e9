import { gzipSync } from 'node:zlib';

import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';

import { decodeOtlpTraces } from './otlp-decode.js';
import { OTLP_MAX_ELEMENTS } from './otlp-normalize.js';
import { OtlpDecodeError } from './otlp-decode.error.js';
import { recordSpans, toOtlpJson, toOtlpProtobuf } from './otlp-payloads.fixture.js';

const JSON_TYPE = 'application/json';

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v >= 0x80) {
    bytes.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}
const PROTO_TYPE = 'application/x-protobuf';

function chatWithChild() {
  const spans = recordSpans([
    {
      name: 'invoke_agent support',
      kind: SpanKind.INTERNAL,
      attributes: { 'gen_ai.operation.name': 'invoke_agent' },
      start: [1_750_000_000, 123_456_789],
      end: [1_750_000_002, 987_654_321],
    },
    {
      name: 'chat gpt-4o',
      parent: 0,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.temperature': 0.25,
        'gen_ai.usage.input_tokens': 42,
        'gen_ai.response.finish_reasons': ['stop', 'length'],
        'feature.enabled': false,
        'big.number': 2 ** 60,
      },
      events: [{ name: 'gen_ai.user.message', attributes: { content: 'Hi', 'x.count': 0 } }],
      start: [1_750_000_000, 500_000_000],
      end: [1_750_000_001, 0],
    },
  ]);
  return spans;
}

async function decodeError(fn: () => Promise<unknown>): Promise<OtlpDecodeError> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OtlpDecodeError);
    return error as OtlpDecodeError;
  }
  throw new Error('expected OtlpDecodeError');
}

describe('decodeOtlpTraces', () => {
  it('normalises ids to hex and timestamps to nanosecond strings from protobuf', async () => {
    const spans = chatWithChild();
    const request = await decodeOtlpTraces(toOtlpProtobuf(spans), PROTO_TYPE);
    const decoded = request.resourceSpans[0].scopeSpans[0].spans;
    const child = decoded.find((s) => s.name === 'chat gpt-4o')!;
    const parent = decoded.find((s) => s.name === 'invoke_agent support')!;

    expect(request.resourceSpans[0].resource.attributes['service.name']).toBe('support-bot');
    expect(request.resourceSpans[0].scopeSpans[0].scope).toEqual({ name: 'gen-ai-test', version: '1.0.0' });
    expect(parent.traceId).toBe(spans[0].spanContext().traceId);
    expect(parent.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(parent.parentSpanId).toBeUndefined();
    expect(child.parentSpanId).toBe(parent.spanId);
    expect(child.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(parent.startTimeUnixNano).toBe('1750000000123456789');
    expect(parent.endTimeUnixNano).toBe('1750000002987654321');
    expect(child.kind).toBe(3); // OTLP SPAN_KIND_CLIENT (API enum + 1)
    expect(parent.kind).toBe(1);
    expect(child.status).toEqual({ code: SpanStatusCode.UNSET });
    expect(child.events[0]).toMatchObject({ name: 'gen_ai.user.message', attributes: { content: 'Hi' } });
    expect(child.events[0].timeUnixNano).toMatch(/^\d{19}$/);
  });

  it('unwraps every AnyValue kind the SDK emits into plain attribute values', async () => {
    const request = await decodeOtlpTraces(toOtlpProtobuf(chatWithChild()), PROTO_TYPE);
    const child = request.resourceSpans[0].scopeSpans[0].spans.find((s) => s.name === 'chat gpt-4o')!;
    expect({ ...child.attributes }).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.temperature': 0.25,
      'gen_ai.usage.input_tokens': 42,
      'gen_ai.response.finish_reasons': ['stop', 'length'],
      'feature.enabled': false,
      'big.number': '1152921504606846976', // 2^60, beyond 2^53: kept exact as a decimal string
    });
    expect(child.events[0].attributes['x.count']).toBe(0);
  });

  it('gives the same plain request for the JSON and the protobuf encoding of the same spans', async () => {
    const spans = chatWithChild();
    const fromJson = await decodeOtlpTraces(toOtlpJson(spans), JSON_TYPE);
    const fromProto = await decodeOtlpTraces(toOtlpProtobuf(spans), PROTO_TYPE);
    expect(fromJson).toEqual(fromProto);
    expect(fromJson.resourceSpans[0].scopeSpans[0].spans).toHaveLength(2);
  });

  it('decodes gzip-encoded bodies of both encodings', async () => {
    const spans = chatWithChild();
    const plain = await decodeOtlpTraces(toOtlpJson(spans), JSON_TYPE);
    expect(
      await decodeOtlpTraces(gzipSync(toOtlpJson(spans)), 'application/json; charset=utf-8', 'gzip'),
    ).toEqual(plain);
    expect(await decodeOtlpTraces(gzipSync(toOtlpProtobuf(spans)), PROTO_TYPE, 'GZIP')).toEqual(plain);
  });

  it('accepts OTLP/JSON with snake_case keys, enum names and numeric int64 values', async () => {
    const body = {
      resource_spans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { string_value: 'py-agent' } }] },
          scope_spans: [
            {
              spans: [
                {
                  trace_id: '5B8EFFF798038103D269B633813FC60C',
                  span_id: 'EEE19B7EC3C1B174',
                  parent_span_id: '',
                  name: 'chat',
                  kind: 'SPAN_KIND_CLIENT',
                  start_time_unix_nano: 1_544_712_660_000_000_000,
                  end_time_unix_nano: '1544712661000000000',
                  attributes: [{ key: 'n', value: { int_value: 7 } }],
                  status: { code: 'STATUS_CODE_ERROR', message: 'boom' },
                },
              ],
            },
          ],
        },
      ],
    };
    const span = (await decodeOtlpTraces(Buffer.from(JSON.stringify(body)), JSON_TYPE)).resourceSpans[0]
      .scopeSpans[0].spans[0];
    expect(span).toMatchObject({
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      kind: 3,
      startTimeUnixNano: '1544712660000000000',
      endTimeUnixNano: '1544712661000000000',
      status: { code: 2, message: 'boom' },
    });
    expect(span.parentSpanId).toBeUndefined();
    expect(span.attributes.n).toBe(7);
  });

  it('throws MALFORMED for attribute values nested deeper than the cap', async () => {
    let value: unknown = { stringValue: 'leaf' };
    for (let i = 0; i < 40; i++) value = { arrayValue: { values: [value] } };
    const span = {
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      attributes: [{ key: 'deep', value }],
    };
    const body = Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }));
    expect((await decodeError(() => decodeOtlpTraces(body, JSON_TYPE))).message).toMatch(
      /nests deeper than 32/,
    );
  });

  it('keeps an attribute named __proto__ as data', async () => {
    const span = {
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      attributes: [{ key: '__proto__', value: { stringValue: 'x' } }],
    };
    const body = Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }));
    const attrs = (await decodeOtlpTraces(body, JSON_TYPE)).resourceSpans[0].scopeSpans[0].spans[0]
      .attributes;
    expect(Object.getOwnPropertyDescriptor(attrs, '__proto__')?.value).toBe('x');
  });

  it('treats an empty JSON object as a request with no spans', async () => {
    expect(await decodeOtlpTraces(Buffer.from('{}'), JSON_TYPE)).toEqual({ resourceSpans: [] });
  });

  it('throws MALFORMED for invalid JSON', async () => {
    const error = await decodeError(() => decodeOtlpTraces(Buffer.from('{"resourceSpans": ['), JSON_TYPE));
    expect(error.code).toBe('MALFORMED');
    expect(error.message).toMatch(/invalid OTLP\/JSON body/);
  });

  it('throws MALFORMED for JSON that is not an ExportTraceServiceRequest', async () => {
    expect((await decodeError(() => decodeOtlpTraces(Buffer.from('[1,2]'), JSON_TYPE))).code).toBe(
      'MALFORMED',
    );
    const badId = { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'xyz', spanId: 'abc' }] }] }] };
    const error = await decodeError(() => decodeOtlpTraces(Buffer.from(JSON.stringify(badId)), JSON_TYPE));
    expect(error.message).toMatch(/traceId must be a hex string/);
  });

  it('throws MALFORMED for a truncated protobuf body', async () => {
    const body = toOtlpProtobuf(chatWithChild());
    const error = await decodeError(() => decodeOtlpTraces(body.subarray(0, body.length - 7), PROTO_TYPE));
    expect(error.code).toBe('MALFORMED');
    expect(error.message).toMatch(/invalid OTLP\/protobuf body/);
  });

  it('throws MALFORMED for protobuf bytes with an invalid wire type', async () => {
    const error = await decodeError(() => decodeOtlpTraces(Buffer.from([0x0f, 0x01, 0x02]), PROTO_TYPE));
    expect(error.code).toBe('MALFORMED');
  });

  it('refuses a gzip bomb once the inflated size passes the inflate ratio, or the size limit', async () => {
    const bomb = gzipSync(Buffer.alloc(9 * 1024 * 1024, 0x20)); // ~9 KiB on the wire
    expect(bomb.length).toBeLessThan(64 * 1024);
    // The platform's decoder stops at BODY_MAX_INFLATE_RATIO (100 by default) times the bytes received.
    const error = await decodeError(() => decodeOtlpTraces(bomb, JSON_TYPE, 'gzip'));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.message).toMatch(/more than 100 times its encoded size/);
    // A ratio that allows it still meets the 8 MiB cap on the inflated body.
    const capped = await decodeError(() =>
      decodeOtlpTraces(bomb, JSON_TYPE, 'gzip', { maxInflateRatio: 10_000 }),
    );
    expect(capped.code).toBe('PAYLOAD_TOO_LARGE');
    expect(capped.message).toMatch(/decompressed body exceeds 8388608 bytes/);
    const small = await decodeError(() =>
      decodeOtlpTraces(gzipSync(toOtlpJson(chatWithChild())), JSON_TYPE, 'gzip', { maxDecodedBytes: 100 }),
    );
    expect(small.code).toBe('PAYLOAD_TOO_LARGE');
    // Under both limits the same kind of body is inflated, and only then judged as JSON.
    const spaces = gzipSync(Buffer.alloc(1024 * 1024, 0x20));
    const inflated = await decodeError(() =>
      decodeOtlpTraces(spaces, JSON_TYPE, 'gzip', { maxInflateRatio: 10_000 }),
    );
    expect(inflated.code).toBe('MALFORMED');
  });

  it(`refuses an export of more than ${OTLP_MAX_ELEMENTS} elements with PAYLOAD_TOO_LARGE, in JSON and protobuf`, async () => {
    const emptyEntries = (n: number) => `{"resourceSpans":[${Array(n).fill('{}').join(',')}]}`;
    await expect(
      decodeOtlpTraces(Buffer.from(emptyEntries(OTLP_MAX_ELEMENTS)), JSON_TYPE),
    ).resolves.toBeDefined();
    const json = await decodeError(() =>
      decodeOtlpTraces(Buffer.from(emptyEntries(OTLP_MAX_ELEMENTS + 1)), JSON_TYPE),
    );
    expect(json.code).toBe('PAYLOAD_TOO_LARGE');
    expect(json.message).toMatch(/more than 50000 elements/);
    // Field 1 (resourceSpans), length-delimited, empty: two bytes an entry.
    const proto = Buffer.from(
      Array(OTLP_MAX_ELEMENTS + 1)
        .fill([0x0a, 0x00])
        .flat(),
    );
    expect((await decodeError(() => decodeOtlpTraces(proto, PROTO_TYPE))).code).toBe('PAYLOAD_TOO_LARGE');
    // Attributes count too: one span with more attributes than the limit.
    const attributes = Array.from({ length: OTLP_MAX_ELEMENTS }, (_, i) => ({
      key: `k${i}`,
      value: { intValue: i },
    }));
    const wideSpan = JSON.stringify({
      resourceSpans: [
        { scopeSpans: [{ spans: [{ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), attributes }] }] },
      ],
    });
    expect((await decodeError(() => decodeOtlpTraces(Buffer.from(wideSpan), JSON_TYPE))).code).toBe(
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('counts nested attribute values on the wire: a gzip of a few KiB cannot make protobufjs build millions of objects', async () => {
    // One span, one attribute, an arrayValue of empty AnyValues: KeyValue{2: AnyValue{5: ArrayValue{1: {} × n}}}.
    const values = Buffer.from(Array(OTLP_MAX_ELEMENTS).fill([0x0a, 0x00]).flat());
    const message = (field: number, body: Buffer) =>
      Buffer.concat([Buffer.from([(field << 3) | 2]), varint(body.length), body]);
    const arrayValue = message(5, values);
    const keyValue = Buffer.concat([message(1, Buffer.from('k')), message(2, arrayValue)]);
    const span = Buffer.concat([
      message(1, Buffer.alloc(16, 1)),
      message(2, Buffer.alloc(8, 2)),
      message(9, keyValue),
    ]);
    const body = message(1, message(2, message(2, span)));
    // Compressed a thousandfold, it meets the inflate ratio first; allowed through that, the wire count refuses it.
    const ratio = await decodeError(() => decodeOtlpTraces(gzipSync(body), PROTO_TYPE, 'gzip'));
    expect(ratio.code).toBe('PAYLOAD_TOO_LARGE');
    const error = await decodeError(() =>
      decodeOtlpTraces(gzipSync(body), PROTO_TYPE, 'gzip', { maxInflateRatio: 10_000 }),
    );
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.message).toMatch(/more than 50000 elements/);
  });

  it('decodes an export within the element limit whatever the nesting of its values', async () => {
    const spans = recordSpans([
      { name: 'chat', attributes: { 'gen_ai.operation.name': 'chat', list: ['a', 'b'] } },
    ]);
    expect((await decodeOtlpTraces(toOtlpProtobuf(spans), PROTO_TYPE)).resourceSpans).toHaveLength(1);
    expect((await decodeOtlpTraces(toOtlpJson(spans), JSON_TYPE)).resourceSpans).toHaveLength(1);
  });

  it('refuses OTLP/JSON text of more values than the element limit allows before parsing it', async () => {
    const body = Buffer.from(`{"resourceSpans":[{"x":[${Array(250_001).fill('0').join(',')}]}]}`);
    const error = await decodeError(() => decodeOtlpTraces(body, JSON_TYPE));
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.message).toMatch(/more than 250000 values/);
  });

  it('throws MALFORMED for a body that claims gzip but is not', async () => {
    const error = await decodeError(() => decodeOtlpTraces(Buffer.from('{}'), JSON_TYPE, 'gzip'));
    expect(error.code).toBe('MALFORMED');
  });

  it('refuses unsupported content types and encodings with their own codes', async () => {
    expect((await decodeError(() => decodeOtlpTraces(Buffer.from('{}'), 'text/plain'))).code).toBe(
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expect((await decodeError(() => decodeOtlpTraces(Buffer.from('{}'), JSON_TYPE, 'br'))).code).toBe(
      'UNSUPPORTED_ENCODING',
    );
  });
});
