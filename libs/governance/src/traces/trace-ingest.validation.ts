import { AppError, type ErrorDetail, type SchemaLimits } from '#platform';
import { SUBJECT_REF_MAX } from '../subjects/subject-key.js';

export interface ToolCallInput {
  name: string;
  arguments?: unknown;
}

/** A validated trace ingest body (POST /traces, or one GenAI span of an OTLP export). */
export interface TraceIngestInput {
  inputContext: {
    prompt: string;
    systemPrompt?: string;
    context?: Record<string, unknown>;
    conversationId?: string;
  };
  outputDecision: {
    action: string;
    text: string;
    actionObject?: Record<string, unknown>;
    rationale?: string;
    alternatives?: unknown[];
    toolCalls?: ToolCallInput[];
  };
  metadata?: Record<string, unknown>;
  agentId?: string;
  confidence?: number;
  rationale?: string;
  /** The client's own reference of the person the decision is about; stored only as its HMAC. */
  subjectRef?: string;
}

/** Longest action name and idempotency key; not schema limits, but bounded so that nothing is unbounded. */
export const MAX_ACTION_LENGTH = 200;
export const MAX_AGENT_ID_LENGTH = 64;
export const MAX_TOOL_NAME_LENGTH = 200;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const TOP_LEVEL = new Set([
  'inputContext',
  'outputDecision',
  'metadata',
  'agentId',
  'confidence',
  'rationale',
  'subjectRef',
]);
const INPUT_FIELDS = new Set(['prompt', 'systemPrompt', 'context', 'conversationId']);
const OUTPUT_FIELDS = new Set(['action', 'text', 'actionObject', 'rationale', 'alternatives', 'toolCalls']);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), 'utf8');

export class Collector {
  readonly details: ErrorDetail[] = [];
  add(field: string, message: string): void {
    this.details.push({ field, message });
  }
}

function unknownFields(obj: Record<string, unknown>, allowed: Set<string>, prefix: string, c: Collector) {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) c.add(prefix + key, `property ${prefix}${key} should not exist`);
  }
}

function optionalString(
  obj: Record<string, unknown>,
  key: string,
  field: string,
  maxLength: number,
  c: Collector,
): void {
  const v = obj[key];
  if (v === undefined || v === null) return;
  if (typeof v !== 'string') c.add(field, `${field} must be a string`);
  else if (v.length > maxLength) c.add(field, `${field} must be at most ${maxLength} characters`);
}

function requiredString(
  obj: Record<string, unknown>,
  key: string,
  field: string,
  maxLength: number,
  c: Collector,
): void {
  if (obj[key] === undefined || obj[key] === null) c.add(field, `${field} is required`);
  else optionalString(obj, key, field, maxLength, c);
}

function optionalObject(
  obj: Record<string, unknown>,
  key: string,
  field: string,
  maxBytes: number | null,
  c: Collector,
): void {
  const v = obj[key];
  if (v === undefined || v === null) return;
  if (!isObject(v)) c.add(field, `${field} must be an object`);
  else if (maxBytes !== null && jsonBytes(v) > maxBytes) {
    c.add(field, `${field} must be at most ${maxBytes} bytes as UTF-8 JSON`);
  }
}

function validateToolCalls(value: unknown, max: number, c: Collector): void {
  const field = 'outputDecision.toolCalls';
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) {
    c.add(field, `${field} must be an array`);
    return;
  }
  if (value.length > max) {
    c.add(field, `${field} must contain at most ${max} elements`);
    return;
  }
  value.forEach((call: unknown, i) => {
    const at = `${field}.${i}`;
    if (!isObject(call)) {
      c.add(at, `${at} must be an object`);
      return;
    }
    unknownFields(call, new Set(['name', 'arguments']), `${at}.`, c);
    requiredString(call, 'name', `${at}.name`, MAX_TOOL_NAME_LENGTH, c);
  });
}

/**
 * Validates a trace ingest body against the limits of the schema version in force:
 * character limits on strings, byte limits on the UTF-8 JSON encoding of objects. Every violation is one
 * `details` entry naming its field; the error is a 400 VALIDATION_ERROR.
 * See docs/agent-builders.md, "Decision pipeline"; trace-ingest.validation.spec.ts,
 * test/traces-validation.e2e-spec.ts.
 */
export function validateTraceIngest(body: unknown, limits: SchemaLimits): TraceIngestInput {
  const c = new Collector();
  if (!isObject(body)) throw AppError.validation('Request body must be a JSON object');
  // The JSON body parser has checked depth, shape and storable text; OTLP checks each decoded span itself.
  unknownFields(body, TOP_LEVEL, '', c);

  const input = body.inputContext;
  if (input === undefined || input === null) c.add('inputContext', 'inputContext is required');
  else if (!isObject(input)) c.add('inputContext', 'inputContext must be an object');
  else {
    const l = limits.inputContext;
    unknownFields(input, INPUT_FIELDS, 'inputContext.', c);
    requiredString(input, 'prompt', 'inputContext.prompt', l.maxPromptLength, c);
    optionalString(input, 'systemPrompt', 'inputContext.systemPrompt', l.maxSystemPromptLength, c);
    optionalObject(input, 'context', 'inputContext.context', l.maxContextBytes, c);
    optionalString(input, 'conversationId', 'inputContext.conversationId', l.maxConversationIdLength, c);
  }

  const output = body.outputDecision;
  if (output === undefined || output === null) c.add('outputDecision', 'outputDecision is required');
  else if (!isObject(output)) c.add('outputDecision', 'outputDecision must be an object');
  else {
    const l = limits.outputDecision;
    unknownFields(output, OUTPUT_FIELDS, 'outputDecision.', c);
    requiredString(output, 'action', 'outputDecision.action', MAX_ACTION_LENGTH, c);
    if (typeof output.action === 'string' && output.action.trim() === '') {
      c.add('outputDecision.action', 'outputDecision.action must not be empty');
    }
    // The output text may be empty (an empty answer lowers the confidence estimate); it has no schema limit
    // of its own and is bounded by the request body limit.
    requiredString(output, 'text', 'outputDecision.text', Number.MAX_SAFE_INTEGER, c);
    optionalObject(output, 'actionObject', 'outputDecision.actionObject', l.maxActionObjectBytes, c);
    optionalString(output, 'rationale', 'outputDecision.rationale', l.maxRationaleLength, c);
    const alternatives = output.alternatives;
    if (alternatives !== undefined && alternatives !== null) {
      if (!Array.isArray(alternatives)) {
        c.add('outputDecision.alternatives', 'outputDecision.alternatives must be an array');
      } else if (alternatives.length > l.maxAlternatives) {
        c.add(
          'outputDecision.alternatives',
          `outputDecision.alternatives must contain at most ${l.maxAlternatives} elements`,
        );
      }
    }
    validateToolCalls(output.toolCalls, l.maxToolCalls, c);
  }

  optionalObject(body, 'metadata', 'metadata', null, c);
  optionalString(body, 'agentId', 'agentId', MAX_AGENT_ID_LENGTH, c);
  // The top-level rationale shares the limit of outputDecision.rationale (the only rationale limit).
  optionalString(body, 'rationale', 'rationale', limits.outputDecision.maxRationaleLength, c);
  validateSubjectRef(body.subjectRef, 'subjectRef', c);
  const confidence = body.confidence;
  if (confidence !== undefined && confidence !== null) {
    if (typeof confidence !== 'number' || !Number.isFinite(confidence) || confidence < 0 || confidence > 1) {
      c.add('confidence', 'confidence must be a number from 0 to 1');
    }
  }

  if (c.details.length > 0) {
    throw AppError.validation(`Validation failed: ${c.details[0]!.message}`, c.details);
  }
  return stripNulls(body) as unknown as TraceIngestInput;
}

/** `subjectRef`: absent, or a string of 1 to SUBJECT_REF_MAX characters (OTLP: `governance.subject.ref`). */
export function validateSubjectRef(value: unknown, field: string, c: Collector): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'string') c.add(field, `${field} must be a string`);
  else if (value.length === 0 || value.length > SUBJECT_REF_MAX) {
    c.add(field, `${field} must be 1 to ${SUBJECT_REF_MAX} characters`);
  }
}

/** Optional fields sent as null are treated as absent, so stored traces never hold both shapes. */
function stripNulls(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === null) continue;
    out[k] =
      (k === 'inputContext' || k === 'outputDecision') && isObject(v)
        ? Object.fromEntries(Object.entries(v).filter(([, inner]) => inner !== null))
        : v;
  }
  return out;
}

/** The Idempotency-Key header: absent, or 1 to 255 characters. */
export function validateIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const key = Array.isArray(value) ? value.join(',') : value;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw AppError.validation(`Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, [
      {
        field: 'Idempotency-Key',
        message: `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
      },
    ]);
  }
  return key;
}
