/**
 * Counts the elements of an OTLP/protobuf ExportTraceServiceRequest on the wire, before protobufjs builds an
 * object for each of them: resource spans, scope spans, spans, events, links, key-values and attribute values
 * (nested array and key-value-list values included). It reads tags and lengths only, descending into the message
 * fields of the OTLP trace schema and skipping every other field; malformed bytes end the count early and are left
 * to the decoder to report. Returns false as soon as more than `limit` elements were seen.
 */

/** The OTLP trace messages whose elements count against the export's element limit. */
export type OtlpMessageKind =
  | 'request'
  | 'resourceSpans'
  | 'resource'
  | 'scopeSpans'
  | 'scope'
  | 'span'
  | 'event'
  | 'link'
  | 'keyValue'
  | 'anyValue'
  | 'arrayValue'
  | 'keyValueList';

/** For each message, its fields (by number) that hold messages, and of which kind. */
const CHILDREN: Record<OtlpMessageKind, Partial<Record<number, OtlpMessageKind>>> = {
  request: { 1: 'resourceSpans' },
  resourceSpans: { 1: 'resource', 2: 'scopeSpans' },
  resource: { 1: 'keyValue' },
  scopeSpans: { 1: 'scope', 2: 'span' },
  scope: { 3: 'keyValue' },
  span: { 9: 'keyValue', 11: 'event', 13: 'link' },
  event: { 3: 'keyValue' },
  link: { 4: 'keyValue' },
  keyValue: { 2: 'anyValue' },
  anyValue: { 5: 'arrayValue', 6: 'keyValueList' },
  arrayValue: { 1: 'anyValue' },
  keyValueList: { 1: 'keyValue' },
};

/** Nesting of messages deeper than this is left to the decoder (attribute values nest at most 32 levels). */
const MAX_DEPTH = 100;

class WireCounter {
  private count = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly limit: number,
  ) {}

  /** Reads a varint at `at`; returns [value, next offset], or undefined when malformed or too long. */
  private varint(at: number, end: number): [number, number] | undefined {
    let value = 0;
    let scale = 1;
    for (let i = at; i < end && i < at + 10; i += 1) {
      const byte = this.bytes[i]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return [value, i + 1];
      scale *= 128;
    }
    return undefined;
  }

  /** Walks the message of `kind` in [start, end). Returns false when the limit was passed. */
  walk(kind: OtlpMessageKind, start: number, end: number, depth: number): boolean {
    if (depth > MAX_DEPTH) return true;
    const children = CHILDREN[kind];
    let at = start;
    while (at < end) {
      const tag = this.varint(at, end);
      if (!tag) return true;
      const [key, afterTag] = tag;
      const field = Math.floor(key / 8);
      switch (key & 7) {
        case 0: {
          const skipped = this.varint(afterTag, end);
          if (!skipped) return true;
          at = skipped[1];
          break;
        }
        case 1:
          at = afterTag + 8;
          break;
        case 5:
          at = afterTag + 4;
          break;
        case 2: {
          const length = this.varint(afterTag, end);
          if (!length) return true;
          const [size, bodyStart] = length;
          const bodyEnd = bodyStart + size;
          if (bodyEnd > end) return true;
          const child = children[field];
          if (child) {
            this.count += 1;
            if (this.count > this.limit) return false;
            if (!this.walk(child, bodyStart, bodyEnd, depth + 1)) return false;
          }
          at = bodyEnd;
          break;
        }
        default:
          return true;
      }
    }
    return true;
  }
}

/** True when the export holds at most `limit` elements (see above); false as soon as it holds more. */
export function otlpProtobufWithinLimit(bytes: Uint8Array, limit: number): boolean {
  return new WireCounter(bytes, limit).walk('request', 0, bytes.length, 0);
}
