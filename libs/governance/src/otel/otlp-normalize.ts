import { OtlpDecodeError } from './otlp-decode.error.js';
import type { OtlpMessageKind } from './otlp-wire-count.js';
import type {
  OtlpAttributes,
  OtlpResourceSpans,
  OtlpScopeSpans,
  OtlpSpan,
  OtlpSpanEvent,
  OtlpTraceRequest,
} from './otlp-trace.types.js';

/**
 * Turns either a parsed OTLP/JSON document or a protobufjs `toObject` result into OtlpTraceRequest.
 * The two differ only in leaf encodings (ids: hex string vs bytes; int64: number/string vs string;
 * bytes: base64 vs Uint8Array; enums: number or name), so one walker handles both. OTLP/JSON uses
 * lowerCamelCase keys; the proto3 JSON mapping also allows the original snake_case names, so both are read.
 */

// Attribute values nest (arrays, kvlists); cap the depth so a crafted body cannot exhaust the stack.
const MAX_ANY_VALUE_DEPTH = 32;

const SPAN_KIND_NAMES: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
const STATUS_CODE_NAMES: Record<string, number> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

type Obj = Record<string, unknown>;

function malformed(message: string): never {
  throw new OtlpDecodeError('MALFORMED', message);
}

function isObj(value: unknown): value is Obj {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

// The snake_case spelling of each field name, computed once: absent fields are looked up under both names, and
// a regular-expression replace per lookup made a body of many empty objects cost seconds.
const SNAKE_CASE = new Map<string, string>();
const snakeCase = (camel: string): string => {
  let snake = SNAKE_CASE.get(camel);
  if (snake === undefined) {
    snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    SNAKE_CASE.set(camel, snake);
  }
  return snake;
};

function field(obj: Obj, camel: string): unknown {
  if (obj[camel] !== undefined) return obj[camel];
  return obj[snakeCase(camel)];
}

function objField(obj: Obj, name: string, where: string): Obj | undefined {
  const value = field(obj, name);
  if (value === undefined || value === null) return undefined;
  if (!isObj(value)) malformed(`${where}.${name} must be an object`);
  return value;
}

function listField(obj: Obj, name: string, where: string): unknown[] {
  const value = field(obj, name);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) malformed(`${where}.${name} must be an array`);
  return value;
}

function stringField(obj: Obj, name: string, where: string): string {
  const value = field(obj, name);
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') malformed(`${where}.${name} must be a string`);
  return value;
}

/** Ids: hex in JSON, raw bytes in protobuf. Returns '' for an absent/empty id. */
function idField(obj: Obj, name: string, bytes: number, where: string): string {
  const value = field(obj, name);
  if (value === undefined || value === null) return '';
  let hex: string;
  if (value instanceof Uint8Array) hex = Buffer.from(value).toString('hex');
  else if (typeof value === 'string' && /^[0-9a-fA-F]*$/.test(value)) hex = value.toLowerCase();
  else malformed(`${where}.${name} must be a hex string`);
  if (hex.length !== 0 && hex.length !== bytes * 2) malformed(`${where}.${name} must be ${bytes} bytes`);
  return hex;
}

/** Non-negative uint64 nanoseconds: string or number in JSON, decimal string after protobufjs. */
function nanosField(obj: Obj, name: string, where: string): string {
  const value = field(obj, name);
  if (value === undefined || value === null) return '0';
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return BigInt(value).toString();
  if (typeof value === 'string' && /^\d{1,20}$/.test(value)) return BigInt(value).toString();
  return malformed(`${where}.${name} must be an unsigned integer`);
}

function enumField(obj: Obj, name: string, names: Record<string, number>, where: string): number {
  const value = field(obj, name);
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && value in names) return names[value];
  return malformed(`${where}.${name} is not a valid enum value`);
}

function int64Value(value: unknown, where: string): number | string {
  let big: bigint;
  // BigInt(number), not BigInt(String(number)): String(2 ** 60) is a rounded "1152921504606847000".
  if (typeof value === 'number' && Number.isInteger(value)) big = BigInt(value);
  else if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) big = BigInt(value);
  else return malformed(`${where} must be an int64`);
  const asNumber = Number(big);
  return Number.isSafeInteger(asNumber) ? asNumber : big.toString();
}

function anyValue(raw: unknown, where: string, depth: number): unknown {
  if (depth > MAX_ANY_VALUE_DEPTH) malformed(`${where} nests deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
  if (raw === undefined || raw === null) return null;
  if (!isObj(raw)) malformed(`${where} must be an AnyValue object`);
  const str = field(raw, 'stringValue');
  if (str !== undefined && str !== null) {
    if (typeof str !== 'string') malformed(`${where}.stringValue must be a string`);
    return str;
  }
  const bool = field(raw, 'boolValue');
  if (bool !== undefined && bool !== null) {
    if (typeof bool !== 'boolean') malformed(`${where}.boolValue must be a boolean`);
    return bool;
  }
  const int = field(raw, 'intValue');
  if (int !== undefined && int !== null) return int64Value(int, `${where}.intValue`);
  const dbl = field(raw, 'doubleValue');
  if (dbl !== undefined && dbl !== null) {
    // The proto3 JSON mapping writes NaN and infinities as strings.
    const num = typeof dbl === 'string' && /^(NaN|-?Infinity)$/.test(dbl) ? Number(dbl) : dbl;
    if (typeof num !== 'number') malformed(`${where}.doubleValue must be a number`);
    return num;
  }
  const arr = objField(raw, 'arrayValue', where);
  if (arr) return listField(arr, 'values', where).map((v, i) => anyValue(v, `${where}[${i}]`, depth + 1));
  const kv = objField(raw, 'kvlistValue', where);
  if (kv) return keyValues(listField(kv, 'values', where), where, depth + 1);
  const bytes = field(raw, 'bytesValue');
  if (bytes !== undefined && bytes !== null) {
    if (bytes instanceof Uint8Array) return Buffer.from(bytes).toString('base64');
    if (typeof bytes !== 'string') malformed(`${where}.bytesValue must be base64`);
    return bytes;
  }
  return null;
}

function keyValues(list: unknown[], where: string, depth = 0): OtlpAttributes {
  // Object.create(null): attribute keys come from the network and may be "__proto__".
  const out: OtlpAttributes = Object.create(null) as OtlpAttributes;
  list.forEach((kv, i) => {
    if (!isObj(kv)) malformed(`${where}[${i}] must be a KeyValue object`);
    const key = stringField(kv, 'key', `${where}[${i}]`);
    out[key] = anyValue(field(kv, 'value'), `${where}.${key}`, depth);
  });
  return out;
}

function attributesOf(obj: Obj, where: string): OtlpAttributes {
  return keyValues(listField(obj, 'attributes', where), `${where}.attributes`);
}

function normalizeEvent(raw: unknown, where: string): OtlpSpanEvent {
  if (!isObj(raw)) malformed(`${where} must be an object`);
  return {
    name: stringField(raw, 'name', where),
    timeUnixNano: nanosField(raw, 'timeUnixNano', where),
    attributes: attributesOf(raw, where),
  };
}

function normalizeSpan(raw: unknown, where: string): OtlpSpan {
  if (!isObj(raw)) malformed(`${where} must be an object`);
  const traceId = idField(raw, 'traceId', 16, where);
  const spanId = idField(raw, 'spanId', 8, where);
  // The OTLP spec calls empty ids invalid; refuse rather than ingest spans that cannot be correlated.
  if (!traceId || /^0+$/.test(traceId)) malformed(`${where}.traceId is missing or all zeroes`);
  if (!spanId || /^0+$/.test(spanId)) malformed(`${where}.spanId is missing or all zeroes`);
  const parentSpanId = idField(raw, 'parentSpanId', 8, where);
  const status = objField(raw, 'status', where) ?? {};
  const statusMessage = stringField(status, 'message', `${where}.status`);
  return {
    traceId,
    spanId,
    ...(parentSpanId ? { parentSpanId } : {}),
    name: stringField(raw, 'name', where),
    kind: enumField(raw, 'kind', SPAN_KIND_NAMES, where),
    startTimeUnixNano: nanosField(raw, 'startTimeUnixNano', where),
    endTimeUnixNano: nanosField(raw, 'endTimeUnixNano', where),
    attributes: attributesOf(raw, where),
    events: listField(raw, 'events', where).map((e, i) => normalizeEvent(e, `${where}.events[${i}]`)),
    status: {
      code: enumField(status, 'code', STATUS_CODE_NAMES, `${where}.status`),
      ...(statusMessage ? { message: statusMessage } : {}),
    },
  };
}

function normalizeScopeSpans(raw: unknown, where: string): OtlpScopeSpans {
  if (!isObj(raw)) malformed(`${where} must be an object`);
  const scope = objField(raw, 'scope', where);
  const version = scope ? stringField(scope, 'version', `${where}.scope`) : '';
  return {
    ...(scope
      ? { scope: { name: stringField(scope, 'name', `${where}.scope`), ...(version ? { version } : {}) } }
      : {}),
    spans: listField(raw, 'spans', where).map((s, i) => normalizeSpan(s, `${where}.spans[${i}]`)),
  };
}

function normalizeResourceSpans(raw: unknown, where: string): OtlpResourceSpans {
  if (!isObj(raw)) malformed(`${where} must be an object`);
  const resource = objField(raw, 'resource', where) ?? {};
  return {
    resource: { attributes: attributesOf(resource, `${where}.resource`) },
    scopeSpans: listField(raw, 'scopeSpans', where).map((s, i) =>
      normalizeScopeSpans(s, `${where}.scopeSpans[${i}]`),
    ),
  };
}

/**
 * Elements of one export at most: resource spans, scope spans, spans, events, links, attributes and nested
 * attribute values together. An SDK batch of 512 spans with 20 attributes each is about 21,000. Counting runs
 * before anything is normalized (on the wire for protobuf), so an export of a million empty entries is refused
 * for the cost of one pass instead of seconds of decoding.
 */
export const OTLP_MAX_ELEMENTS = 50_000;

export function tooManyElements(): never {
  throw new OtlpDecodeError(
    'PAYLOAD_TOO_LARGE',
    `export holds more than ${OTLP_MAX_ELEMENTS} elements (resource spans, scope spans, spans, events, links, ` +
      'attributes and attribute values); ' +
      'send smaller batches',
  );
}

/** The fields of each OTLP message that hold messages (one or a list), as the element count follows them. */
const COUNTED_CHILDREN: Record<OtlpMessageKind, [string, OtlpMessageKind][]> = {
  request: [['resourceSpans', 'resourceSpans']],
  resourceSpans: [
    ['resource', 'resource'],
    ['scopeSpans', 'scopeSpans'],
  ],
  resource: [['attributes', 'keyValue']],
  scopeSpans: [
    ['scope', 'scope'],
    ['spans', 'span'],
  ],
  scope: [['attributes', 'keyValue']],
  span: [
    ['attributes', 'keyValue'],
    ['events', 'event'],
    ['links', 'link'],
  ],
  event: [['attributes', 'keyValue']],
  link: [['attributes', 'keyValue']],
  keyValue: [['value', 'anyValue']],
  anyValue: [
    ['arrayValue', 'arrayValue'],
    ['kvlistValue', 'keyValueList'],
  ],
  arrayValue: [['values', 'anyValue']],
  keyValueList: [['values', 'keyValue']],
};

function countElements(obj: Obj, kind: OtlpMessageKind, budget: { left: number }, depth: number): void {
  // Deeper nesting is refused by the normalizer, which names the attribute.
  if (depth > MAX_ANY_VALUE_DEPTH * 2 + 8) return;
  for (const [name, childKind] of COUNTED_CHILDREN[kind]) {
    const value = field(obj, name);
    const children = Array.isArray(value) ? value : isObj(value) ? [value] : [];
    budget.left -= children.length;
    if (budget.left < 0) tooManyElements();
    for (const child of children) if (isObj(child)) countElements(child, childKind, budget, depth + 1);
  }
}

/**
 * Refuses (413) parsed OTLP/JSON of more than OTLP_MAX_ELEMENTS elements: the same elements the protobuf wire
 * count follows (otlp-wire-count.ts), counted before anything is normalized.
 */
export function assertOtlpElementLimit(raw: unknown): void {
  if (isObj(raw)) countElements(raw, 'request', { left: OTLP_MAX_ELEMENTS }, 0);
}

export function normalizeTraceRequest(raw: unknown): OtlpTraceRequest {
  if (!isObj(raw)) malformed('request body must be an ExportTraceServiceRequest object');
  return {
    resourceSpans: listField(raw, 'resourceSpans', 'request').map((r, i) =>
      normalizeResourceSpans(r, `resourceSpans[${i}]`),
    ),
  };
}
