import { Readable } from 'node:stream';
import { AppError, decodeContentEncoding, scanJsonShape } from '#platform';

import { OtlpDecodeError } from './otlp-decode.error.js';
import {
  assertOtlpElementLimit,
  normalizeTraceRequest,
  OTLP_MAX_ELEMENTS,
  tooManyElements,
} from './otlp-normalize.js';
import { otlpProtobufWithinLimit } from './otlp-wire-count.js';
import { ExportTraceServiceRequestType, PROTO_TO_OBJECT_OPTIONS } from './otlp-proto.js';
import type { OtlpTraceRequest } from './otlp-trace.types.js';

/** Default cap on the decoded (inflated) body: gzip compresses OTLP JSON 10–20×, so bound what we inflate. */
export const OTLP_MAX_DECODED_BYTES = 8 * 1024 * 1024;
/** BODY_MAX_INFLATE_RATIO's default, for callers without the configuration (the endpoint passes its value). */
const DEFAULT_MAX_INFLATE_RATIO = 100;

export interface OtlpDecodeOptions {
  /** Largest body accepted after decompression, in bytes. */
  maxDecodedBytes?: number;
  /** Decoded bytes per received byte at most (BODY_MAX_INFLATE_RATIO), enforced by the platform's decoder. */
  maxInflateRatio?: number;
}

export type OtlpEncoding = 'json' | 'protobuf';

/** Maps a Content-Type header (parameters ignored) to the OTLP/HTTP encoding it names. */
export function otlpEncodingOf(contentType: string): OtlpEncoding {
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  if (mediaType === 'application/json') return 'json';
  // OTLP/HTTP names application/x-protobuf; application/protobuf is the registered type some clients send.
  if (mediaType === 'application/x-protobuf' || mediaType === 'application/protobuf') return 'protobuf';
  throw new OtlpDecodeError(
    'UNSUPPORTED_MEDIA_TYPE',
    `unsupported Content-Type "${mediaType}"; use application/json or application/x-protobuf`,
  );
}

/**
 * The body as sent, decompressed through the platform's Content-Encoding decoder (the one every JSON route's body
 * goes through): gzip is inflated as a stream, off the event loop, and refused once its output passes
 * `maxInflateRatio` times the bytes received (a gzip bomb) or `maxBytes`, whichever comes first; never more than
 * that is held.
 */
async function inflate(
  body: Buffer,
  contentEncoding: string | undefined,
  maxBytes: number,
  maxRatio: number,
): Promise<Buffer> {
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') {
    if (body.length > maxBytes) {
      throw new OtlpDecodeError('PAYLOAD_TOO_LARGE', `request body exceeds ${maxBytes} bytes`);
    }
    return body;
  }
  // OTLP/HTTP defines gzip only; anything else is refused rather than guessed at.
  if (encoding !== 'gzip') {
    throw new OtlpDecodeError('UNSUPPORTED_ENCODING', `unsupported Content-Encoding "${encoding}"; use gzip`);
  }
  const decoded = decodeContentEncoding(encoding, Readable.from([body], { objectMode: false }), maxRatio);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of decoded as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        throw new OtlpDecodeError('PAYLOAD_TOO_LARGE', `decompressed body exceeds ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof OtlpDecodeError) throw error;
    // The decoder's own refusals: 413 past the ratio, 400 for data that is not gzip.
    if (error instanceof AppError && error.status === 413) {
      throw new OtlpDecodeError('PAYLOAD_TOO_LARGE', error.message, { cause: error });
    }
    throw new OtlpDecodeError('MALFORMED', `invalid gzip body: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    decoded.destroy();
  }
  return Buffer.concat(chunks, size);
}

/**
 * The shape an OTLP/JSON text may have before it is parsed: an attribute is about six keys and items, so this
 * leaves room for OTLP_MAX_ELEMENTS elements, and refuses a body of a million tiny values before building them.
 */
const OTLP_JSON_SHAPE = { maxObjectKeys: 1000, maxTotalKeys: 5 * OTLP_MAX_ELEMENTS };
// Each level of an attribute value is three JSON levels ({"arrayValue":{"values":[…]}}): room for the normalizer's
// own cap on value depth, which then names the attribute.
const OTLP_JSON_MAX_DEPTH = 256;

function parseJson(bytes: Buffer): unknown {
  let text: string;
  try {
    // fatal: invalid UTF-8 is a malformed body, not text to be patched with U+FFFD.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new OtlpDecodeError('MALFORMED', 'invalid OTLP/JSON body: not valid UTF-8', { cause: error });
  }
  const refusal = scanJsonShape(text, OTLP_JSON_SHAPE, OTLP_JSON_MAX_DEPTH);
  if (refusal === 'depth')
    throw new OtlpDecodeError('MALFORMED', `OTLP/JSON body nests deeper than ${OTLP_JSON_MAX_DEPTH} levels`);
  if (refusal) {
    throw new OtlpDecodeError(
      'PAYLOAD_TOO_LARGE',
      `OTLP/JSON body holds more than ${OTLP_JSON_SHAPE.maxTotalKeys} values, or an object more than ` +
        `${OTLP_JSON_SHAPE.maxObjectKeys} keys; send smaller batches`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new OtlpDecodeError('MALFORMED', `invalid OTLP/JSON body: ${(error as Error).message}`, {
      cause: error,
    });
  }
  assertOtlpElementLimit(parsed);
  return parsed;
}

function parseProtobuf(bytes: Buffer): unknown {
  try {
    // Counted on the wire, before protobufjs builds an object per element.
    if (!otlpProtobufWithinLimit(bytes, OTLP_MAX_ELEMENTS)) tooManyElements();
    const message = ExportTraceServiceRequestType.decode(bytes);
    return ExportTraceServiceRequestType.toObject(message, PROTO_TO_OBJECT_OPTIONS);
  } catch (error) {
    if (error instanceof OtlpDecodeError) throw error;
    // protobufjs throws RangeError/Error on truncated or invalid wire data (and on stack exhaustion).
    throw new OtlpDecodeError('MALFORMED', `invalid OTLP/protobuf body: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * Decodes an OTLP/HTTP trace export body (JSON or protobuf, optionally gzip-compressed) into the plain
 * OtlpTraceRequest shape. Rejects with OtlpDecodeError for anything it cannot decode.
 */
export async function decodeOtlpTraces(
  body: Buffer,
  contentType: string,
  contentEncoding?: string,
  options: OtlpDecodeOptions = {},
): Promise<OtlpTraceRequest> {
  const encoding = otlpEncodingOf(contentType);
  const bytes = await inflate(
    body,
    contentEncoding,
    options.maxDecodedBytes ?? OTLP_MAX_DECODED_BYTES,
    options.maxInflateRatio ?? DEFAULT_MAX_INFLATE_RATIO,
  );
  const raw = encoding === 'json' ? parseJson(bytes) : parseProtobuf(bytes);
  return normalizeTraceRequest(raw);
}
