import { ExportTraceServiceResponseType } from './otlp-proto.js';

/** OTLP ExportTraceServiceResponse in its OTLP/JSON form. */
export interface ExportTraceServiceResponseJson {
  partialSuccess?: { rejectedSpans: number; errorMessage: string };
}

/**
 * Builds the ExportTraceServiceResponse. The OTLP spec says a fully accepted request leaves partial_success
 * unset, so 0 rejected spans gives `{}`. rejectedSpans is an int64; it is written as a JSON number, which
 * OTLP/JSON receivers accept (the OpenTelemetry JS exporter types it as number).
 */
export function partialSuccess(rejected: number, message: string): ExportTraceServiceResponseJson {
  if (!Number.isSafeInteger(rejected) || rejected < 0) {
    throw new RangeError(`rejected span count must be a non-negative integer, got ${rejected}`);
  }
  if (rejected === 0) return {};
  return { partialSuccess: { rejectedSpans: rejected, errorMessage: message } };
}

/** Encodes the response for clients that sent application/x-protobuf (the reply uses the request's type). */
export function encodeExportTraceResponse(response: ExportTraceServiceResponseJson): Uint8Array {
  const message = ExportTraceServiceResponseType.fromObject(response);
  return ExportTraceServiceResponseType.encode(message).finish();
}

/** Inverse of encodeExportTraceResponse; mainly for tests and diagnostics. */
export function decodeExportTraceResponse(bytes: Uint8Array): ExportTraceServiceResponseJson {
  const message = ExportTraceServiceResponseType.decode(bytes);
  const obj = ExportTraceServiceResponseType.toObject(message, { longs: Number, defaults: true }) as {
    partialSuccess?: { rejectedSpans: number; errorMessage: string };
  };
  return obj.partialSuccess ? { partialSuccess: obj.partialSuccess } : {};
}
