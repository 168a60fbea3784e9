import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';

import { decodeExportTraceResponse, encodeExportTraceResponse, partialSuccess } from './otlp-response.js';

describe('partialSuccess', () => {
  it('returns an empty response when no span was rejected', () => {
    expect(partialSuccess(0, '')).toEqual({});
  });

  it('returns rejectedSpans and errorMessage when spans were rejected', () => {
    expect(partialSuccess(2, '2 spans had no prompt')).toEqual({
      partialSuccess: { rejectedSpans: 2, errorMessage: '2 spans had no prompt' },
    });
  });

  it('refuses a negative or fractional count', () => {
    expect(() => partialSuccess(-1, 'x')).toThrow(RangeError);
    expect(() => partialSuccess(1.5, 'x')).toThrow(RangeError);
  });
});

describe('encodeExportTraceResponse', () => {
  it('round-trips a partial success through its own decoder', () => {
    const response = partialSuccess(3, 'three spans rejected');
    expect(decodeExportTraceResponse(encodeExportTraceResponse(response))).toEqual(response);
  });

  it('is read back by the OpenTelemetry exporter deserializer', () => {
    const bytes = encodeExportTraceResponse(partialSuccess(3, 'three spans rejected'));
    expect(ProtobufTraceSerializer.deserializeResponse(bytes)).toEqual({
      partialSuccess: { rejectedSpans: 3, errorMessage: 'three spans rejected' },
    });
  });

  it('encodes a full success as an empty message', () => {
    const bytes = encodeExportTraceResponse(partialSuccess(0, ''));
    expect(bytes).toHaveLength(0);
    expect(decodeExportTraceResponse(bytes)).toEqual({});
  });
});
